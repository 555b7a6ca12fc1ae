// Command go-remembers-old-child is the sample Widget controller (samples/go-controller) with one classic bug: each
// Widget also gets a "flavour" ConfigMap named after its spec.data["color"] ("<widget>-<color>"), and when the color
// changes the controller deletes the flavour child it remembers having made — remembered in the process's memory.
// A controller that was down while the color changed (a restart, a leader failover, an upgrade) starts with an empty
// memory: it makes the new child and never deletes the old one. The old child is owned by the Widget, so the garbage
// collector keeps it while the Widget exists. A controller watching the change, or a Widget created with the new
// color, ends with one flavour child: only a restart shows the bug, and the robustness checks' history check finds it
// in its restart run (reconcile-lab check --go "go run ."). Fix: list the flavour children (by label) and delete those
// the current spec does not want. Not for use: a test subject.
package main

import (
	"context"
	"os"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcile-lab/reconcile-lab/bridge"
	"github.com/reconcile-lab/reconcile-lab/samples/go-controller/widget"
)

// flavourLabel marks the flavour children (what a fix would list them by).
const flavourLabel = "lab.reconcile.dev/flavour-of"

// rememberingFlavour runs the correct reconciler, then keeps the flavour child, deleting the previous one only when
// this process remembers making it (the bug).
type rememberingFlavour struct {
	inner  *widget.Reconciler
	client client.Client
	scheme *runtime.Scheme

	mu   sync.Mutex
	made map[types.NamespacedName]string // key → name of the flavour child this process made last
}

func (r *rememberingFlavour) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	res, err := r.inner.Reconcile(ctx, req)
	if err != nil {
		return res, err
	}
	var w widget.Widget
	if err := r.client.Get(ctx, req.NamespacedName, &w); err != nil || !w.DeletionTimestamp.IsZero() {
		return res, client.IgnoreNotFound(err)
	}
	color := strings.ToLower(w.Spec.Data["color"])
	if color == "" {
		color = "plain"
	}
	name := req.Name + "-" + color
	var child corev1.ConfigMap
	err = r.client.Get(ctx, types.NamespacedName{Namespace: req.Namespace, Name: name}, &child)
	if apierrors.IsNotFound(err) {
		child = corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: req.Namespace, Labels: map[string]string{flavourLabel: req.Name}}, Data: map[string]string{"color": color}}
		if err := controllerutil.SetOwnerReference(&w, &child, r.scheme); err != nil {
			return res, err
		}
		if err := r.client.Create(ctx, &child); err != nil && !apierrors.IsAlreadyExists(err) {
			return res, err
		}
	} else if err != nil {
		return res, err
	}
	r.mu.Lock()
	old := r.made[req.NamespacedName]
	r.made[req.NamespacedName] = name
	r.mu.Unlock()
	if old != "" && old != name {
		// BUG: the old child is known only from memory.
		stale := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: old, Namespace: req.Namespace}}
		if err := r.client.Delete(ctx, stale); client.IgnoreNotFound(err) != nil {
			return res, err
		}
	}
	return res, nil
}

func main() {
	ctrl.SetLogger(zap.New(zap.UseDevMode(true)))
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = widget.AddToScheme(scheme)
	opts := ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"}
	bridge.Setup(&opts)
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), opts)
	if err != nil {
		os.Exit(1)
	}
	r := &rememberingFlavour{inner: &widget.Reconciler{Client: mgr.GetClient(), DependencyRequeue: 15 * time.Second}, client: mgr.GetClient(), scheme: scheme, made: map[types.NamespacedName]string{}}
	err = ctrl.NewControllerManagedBy(mgr).For(&widget.Widget{}).Owns(&corev1.ConfigMap{}).Named(widget.Name).
		WithOptions(bridge.Options(mgr, widget.Name, controller.Options{})).
		Complete(bridge.Wrap(mgr, widget.Name, r, &widget.Widget{}))
	if err != nil {
		os.Exit(1)
	}
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		os.Exit(1)
	}
}
