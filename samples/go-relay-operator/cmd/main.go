// Command relay-operator is a third Go controller for Reconcile Lab's tests, shaped unlike the other two the way
// an operator-sdk / kubebuilder v4 user writes one: a namespaced CRD with two served versions (api/v1alpha1,
// config/crd), a manager cache limited to some namespaces (and to labelled Secrets), the builder controller
// "beacon" (a GenericEvent channel source, a metadata-only owned ConfigMap, its own slower rate limiter, 4
// workers, a finalizer, server-side apply both ways, Status().Patch, DeleteAllOf, Create with generateName, an
// event recorder) and the low-level controller "lamp-keeper" (controller.New + Watch(source.Kind)); with --board
// also "beacon-board", a typed controller with a custom request type (one key per namespace).
package main

import (
	"flag"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/reconcile-lab/reconcile-lab/bridge"

	relayv1alpha1 "example.com/relay-operator/api/v1alpha1"
	"example.com/relay-operator/internal/controller"
)

var (
	scheme   = runtime.NewScheme()
	setupLog = ctrl.Log.WithName("setup")
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(relayv1alpha1.AddToScheme(scheme))
}

func main() {
	var metricsAddr, probeAddr, externalDir string
	var enableLeaderElection bool
	var pingEvery time.Duration
	var namespaces string
	flag.StringVar(&metricsAddr, "metrics-bind-address", "0", "The address the metrics endpoint binds to.")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "The address the probe endpoint binds to.")
	flag.BoolVar(&enableLeaderElection, "leader-elect", false, "Enable leader election for controller manager.")
	flag.StringVar(&externalDir, "external-dir", "/tmp/gouser2-external", "Where the external things live.")
	flag.DurationVar(&pingEvery, "ping-every", 5*time.Second, "How often annotated beacons are pinged.")
	flag.StringVar(&namespaces, "namespaces", "team-a,team-b", "The namespaces the manager's cache watches (comma-separated).")
	var board bool
	flag.BoolVar(&board, "board", false, "Also run the beacon-board controller (a custom request type: one key per namespace).")
	var lampScope string
	flag.StringVar(&lampScope, "lamp-scope", "", "The namespaces the cache watches Secrets in, each with its own label selector: ns[:selector] entries separated by ';' (a namespace without one takes app=lamp). Default: the manager's namespaces, app=lamp.")
	opts := zap.Options{Development: true}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))

	mgrOpts := ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress: probeAddr,
		LeaderElection:         enableLeaderElection,
		LeaderElectionID:       "b3c1d2e4.relay.example.io",
		Cache: cache.Options{
			DefaultNamespaces: map[string]cache.Config{},
			ByObject: map[client.Object]cache.ByObject{
				&corev1.Secret{}: {Label: labels.SelectorFromSet(labels.Set{"app": "lamp"})},
			},
		},
	}
	for _, ns := range strings.Split(namespaces, ",") {
		mgrOpts.Cache.DefaultNamespaces[ns] = cache.Config{}
	}
	if lampScope != "" {
		// Per-namespace scope of one kind: ByObject Namespaces with their own label selectors.
		byNs := map[string]cache.Config{}
		for _, entry := range strings.Split(lampScope, ";") {
			ns, sel, found := strings.Cut(entry, ":")
			cfg := cache.Config{}
			if found {
				parsed, err := labels.Parse(sel)
				if err != nil {
					setupLog.Error(err, "bad --lamp-scope selector", "entry", entry)
					os.Exit(1)
				}
				cfg.LabelSelector = parsed
			}
			byNs[ns] = cfg
		}
		for obj, by := range mgrOpts.Cache.ByObject {
			if _, ok := obj.(*corev1.Secret); ok {
				by.Namespaces = byNs
				mgrOpts.Cache.ByObject[obj] = by
			}
		}
	}
	bridge.Setup(&mgrOpts) // NewClient: write journal + dry run; NewCache: why-queued
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), mgrOpts)
	if err != nil {
		setupLog.Error(err, "unable to start manager")
		os.Exit(1)
	}
	pings := make(chan event.GenericEvent)
	if err := (&controller.BeaconReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("beacon"), Pings: pings, ExternalDir: externalDir}).SetupWithManager(mgr); err != nil {
		setupLog.Error(err, "unable to create controller", "controller", "Beacon")
		os.Exit(1)
	}
	if err := (&controller.LampReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		setupLog.Error(err, "unable to create controller", "controller", "Lamp")
		os.Exit(1)
	}
	if board {
		if err := (&controller.BoardReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
			setupLog.Error(err, "unable to create controller", "controller", "beacon-board")
			os.Exit(1)
		}
	}
	if err := mgr.Add(&controller.Pinger{Client: mgr.GetClient(), Pings: pings, Every: pingEvery}); err != nil {
		setupLog.Error(err, "unable to add pinger")
		os.Exit(1)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		setupLog.Error(err, "unable to set up health check")
		os.Exit(1)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		setupLog.Error(err, "unable to set up ready check")
		os.Exit(1)
	}
	setupLog.Info("starting manager")
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		setupLog.Error(err, "problem running manager")
		os.Exit(1)
	}
}
