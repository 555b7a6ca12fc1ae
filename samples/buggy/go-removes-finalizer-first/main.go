// Command go-removes-finalizer-first is the sample Widget controller (samples/go-controller) with one classic
// deletion bug: every Widget also gets a registry entry, a ConfigMap "<widget>-registry" WITHOUT an ownerReference
// (like a record in an external system: nothing deletes it for us), and that entry is deleted only AFTER the
// sample's reconcile has removed the Widget's finalizer. A crash between the two writes leaves the entry behind
// for good: the Widget is already gone, so nothing reconciles it again. The robustness checks' deletion check
// catches it by crashing the deletion after each of its writes (reconcile-lab check --go "go run ."). Fix: delete
// the entry before the finalizer comes off. Not for use: a test subject.
package main

import (
	"context"
	"os"
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
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcile-lab/reconcile-lab/bridge"
	"github.com/reconcile-lab/reconcile-lab/samples/go-controller/widget"
)

// registryAfterFinalizer runs the correct reconciler, then keeps the registry entry: created while the Widget
// lives, deleted (the bug) after the inner reconcile already removed the finalizer of a Widget being deleted.
type registryAfterFinalizer struct {
	inner  *widget.Reconciler
	client client.Client
}

func (r *registryAfterFinalizer) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var w widget.Widget
	if err := r.client.Get(ctx, req.NamespacedName, &w); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	deleting := !w.DeletionTimestamp.IsZero()
	res, err := r.inner.Reconcile(ctx, req)
	if err != nil {
		return res, err
	}
	entry := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: req.Name + "-registry", Namespace: req.Namespace}, Data: map[string]string{"widget": req.Name}}
	if deleting {
		// BUG: the inner reconcile has already removed the finalizer; a crash before this delete loses it.
		return res, client.IgnoreNotFound(r.client.Delete(ctx, entry))
	}
	var existing corev1.ConfigMap
	err = r.client.Get(ctx, types.NamespacedName{Namespace: req.Namespace, Name: entry.Name}, &existing)
	if apierrors.IsNotFound(err) {
		if err := r.client.Create(ctx, entry); err != nil && !apierrors.IsAlreadyExists(err) {
			return res, err
		}
		return res, nil
	}
	return res, err
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
	r := &registryAfterFinalizer{inner: &widget.Reconciler{Client: mgr.GetClient(), DependencyRequeue: 15 * time.Second}, client: mgr.GetClient()}
	err = ctrl.NewControllerManagedBy(mgr).For(&widget.Widget{}).Named(widget.Name).
		WithOptions(bridge.Options(mgr, widget.Name, controller.Options{})).
		Complete(bridge.Wrap(mgr, widget.Name, r, &widget.Widget{}))
	if err != nil {
		os.Exit(1)
	}
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		os.Exit(1)
	}
}
