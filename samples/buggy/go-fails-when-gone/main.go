// Command go-fails-when-gone is the sample Widget controller (samples/go-controller) with one classic bug: its
// reconcile starts with a Get of the Widget that returns the error as it is, NotFound included, where the sample
// returns client.IgnoreNotFound(err). Deleting a Widget queues its key once more (the delete event of its last
// finalizer's removal); that reconcile has nothing to do, but it fails, and controller-runtime retries a failing key
// with backoff for as long as the process runs. The robustness checks' deletion check finds it
// (reconcile-lab check --go "go run ."). Not for use: a test subject.
package main

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcile-lab/reconcile-lab/samples/go-controller/subject"
	"github.com/reconcile-lab/reconcile-lab/samples/go-controller/widget"
)

// readsFirst reads the Widget and returns any error, then runs the correct reconciler.
type readsFirst struct {
	inner  *widget.Reconciler
	client client.Client
}

func (r *readsFirst) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var w widget.Widget
	if err := r.client.Get(ctx, req.NamespacedName, &w); err != nil {
		return reconcile.Result{}, err // BUG: NotFound too; should be client.IgnoreNotFound(err)
	}
	return r.inner.Reconcile(ctx, req)
}

func main() {
	subject.Main(func(mgr ctrl.Manager, inner *widget.Reconciler) reconcile.Reconciler {
		return &readsFirst{inner: inner, client: mgr.GetClient()}
	}, &corev1.ConfigMap{})
}
