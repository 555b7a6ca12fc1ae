// Command go-controller runs the sample Widget controller. Under Reconcile Lab (RECONCILE_LAB_BRIDGE set) the
// editor shows and drives its queue; without it, it is a plain controller-runtime program.
package main

import (
	"flag"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/reconcile-lab/reconcile-lab/bridge"
	"github.com/reconcile-lab/reconcile-lab/samples/go-controller/widget"
)

func main() {
	var (
		leaderElect     bool
		leaseDuration   time.Duration
		renewDeadline   time.Duration
		retryPeriod     time.Duration
		leaseNamespace  string
		metricsAddr     string
		probeAddr       string
		noPriorityQueue bool
		workers         int
		depRequeue      time.Duration
		namespaces      string
	)
	flag.BoolVar(&leaderElect, "leader-elect", false, "Use leader election (a Lease) before reconciling.")
	flag.DurationVar(&leaseDuration, "lease-duration", 15*time.Second, "Leader election lease duration.")
	flag.DurationVar(&renewDeadline, "renew-deadline", 10*time.Second, "Leader election renew deadline.")
	flag.DurationVar(&retryPeriod, "retry-period", 2*time.Second, "Leader election retry period.")
	flag.StringVar(&leaseNamespace, "leader-election-namespace", "default", "Namespace of the leader election Lease.")
	flag.StringVar(&metricsAddr, "metrics-bind-address", "0", "Metrics address (\"0\" = off, \":0\" = a free port).")
	flag.StringVar(&probeAddr, "health-probe-bind-address", "0", "Health probe address (\"0\" = off, \":0\" = a free port).")
	flag.BoolVar(&noPriorityQueue, "no-priority-queue", false, "Use client-go's rate-limited queue instead of controller-runtime's priority queue.")
	flag.IntVar(&workers, "max-concurrent-reconciles", 1, "Workers of the Widget controller.")
	flag.DurationVar(&depRequeue, "dependency-requeue", 15*time.Second, "Requeue delay while a spec.dependsOn object is missing.")
	zapOpts := zap.Options{Development: true}
	flag.StringVar(&namespaces, "namespace", "", "Watch only these namespaces (comma-separated); empty: all namespaces.")
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	log := ctrl.Log.WithName("setup")

	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = widget.AddToScheme(scheme)

	usePQ := !noPriorityQueue
	opts := ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress:  probeAddr,
		LeaderElection:          leaderElect,
		LeaderElectionID:        "widget-sample.lab.reconcile.dev",
		LeaderElectionNamespace: leaseNamespace,
		LeaseDuration:           &leaseDuration,
		RenewDeadline:           &renewDeadline,
		RetryPeriod:             &retryPeriod,
		Controller:              config.Controller{UsePriorityQueue: &usePQ},
	}
	if namespaces != "" {
		opts.Cache.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range strings.Split(namespaces, ",") {
			if ns = strings.TrimSpace(ns); ns != "" {
				opts.Cache.DefaultNamespaces[ns] = cache.Config{}
			}
		}
	}
	bridge.Setup(&opts) // Reconcile Lab: write journal, dry run, why-queued (no-op without RECONCILE_LAB_BRIDGE)

	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), opts)
	if err != nil {
		log.Error(err, "unable to create the manager")
		os.Exit(1)
	}
	r := &widget.Reconciler{Client: mgr.GetClient(), DependencyRequeue: depRequeue}
	if err := r.SetupWithManager(mgr, controller.Options{MaxConcurrentReconciles: workers}); err != nil {
		log.Error(err, "unable to set up the Widget controller")
		os.Exit(1)
	}
	if probeAddr != "0" {
		_ = mgr.AddHealthzCheck("healthz", healthz.Ping)
		_ = mgr.AddReadyzCheck("readyz", healthz.Ping)
	}
	log.Info("starting", "leaderElection", leaderElect, "priorityQueue", usePQ, "bridge", bridge.Enabled())
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "manager stopped")
		os.Exit(1)
	}
}
