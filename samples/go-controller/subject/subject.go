// Package subject runs a variant of the sample Widget controller as a program, wired as samples/go-controller/cmd
// wires the sample: a manager with the Widget scheme and the bridge (bridge.Setup), metrics and probes off, and one
// controller named widget.Name for Widgets with the bridge's queue and reconciler wrapper. The caller builds the
// reconciler around the correct one. The buggy samples (samples/buggy/go-*) are such variants: test subjects for the
// robustness checks, not for use.
package subject

import (
	"context"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcile-lab/reconcile-lab/bridge"
	"github.com/reconcile-lab/reconcile-lab/samples/go-controller/widget"
)

// ReconcileThenGet runs inner for req, then reads the Widget again: for a variant that adds its own step after the
// correct reconciler. w is nil when there is nothing more to do — inner failed (err is its error), the Widget is gone
// (err nil) or it is being deleted; res is inner's result, for the caller to return.
func ReconcileThenGet(ctx context.Context, inner *widget.Reconciler, c client.Client, req reconcile.Request) (w *widget.Widget, res reconcile.Result, err error) {
	res, err = inner.Reconcile(ctx, req)
	if err != nil {
		return nil, res, err
	}
	var got widget.Widget
	if err := c.Get(ctx, req.NamespacedName, &got); err != nil || !got.DeletionTimestamp.IsZero() {
		return nil, res, client.IgnoreNotFound(err)
	}
	return &got, res, nil
}

// Main builds the manager, asks build for the reconciler (given the manager and the correct Widget reconciler, whose
// dependency requeue is 15 s), watches the owned kinds `owns` besides Widgets, and runs until SIGINT / SIGTERM. Any
// set-up or run error is printed and the process exits with 1.
func Main(build func(mgr ctrl.Manager, inner *widget.Reconciler) reconcile.Reconciler, owns ...client.Object) {
	MainWithEventFilter(nil, build, owns...)
}

// MainWithEventFilter is Main with `filter` given to the builder's WithEventFilter (nil: none), which applies it to
// every watch of the controller: the Widgets' and the owned kinds' events alike.
func MainWithEventFilter(filter predicate.Predicate, build func(mgr ctrl.Manager, inner *widget.Reconciler) reconcile.Reconciler, owns ...client.Object) {
	ctrl.SetLogger(zap.New(zap.UseDevMode(true)))
	if err := run(build, filter, owns); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(build func(mgr ctrl.Manager, inner *widget.Reconciler) reconcile.Reconciler, filter predicate.Predicate, owns []client.Object) error {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := widget.AddToScheme(scheme); err != nil {
		return err
	}
	opts := ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"}
	bridge.Setup(&opts)
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), opts)
	if err != nil {
		return err
	}
	r := build(mgr, &widget.Reconciler{Client: mgr.GetClient(), DependencyRequeue: 15 * time.Second})
	b := ctrl.NewControllerManagedBy(mgr).For(&widget.Widget{}).Named(widget.Name)
	for _, o := range owns {
		b = b.Owns(o)
	}
	if filter != nil {
		b = b.WithEventFilter(filter)
	}
	if err := b.WithOptions(bridge.Options(mgr, widget.Name, controller.Options{})).Complete(bridge.Wrap(mgr, widget.Name, r, &widget.Widget{})); err != nil {
		return err
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}
