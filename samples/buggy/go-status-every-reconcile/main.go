// Command go-status-every-reconcile is the sample Widget controller (samples/go-controller) with one classic bug:
// after every reconcile it writes status with the time of the pass. Each status write is a watch event that
// queues the Widget again, so it reconciles forever (a hot loop). The robustness checks' convergence check
// catches it (reconcile-lab check --go "go run ."). Not for use: a test subject.
package main

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcile-lab/reconcile-lab/samples/go-controller/subject"
	"github.com/reconcile-lab/reconcile-lab/samples/go-controller/widget"
)

// statusEveryPass runs the correct reconciler, then (the bug) stamps status with the time on every pass.
type statusEveryPass struct {
	inner  *widget.Reconciler
	client client.Client
}

func (r *statusEveryPass) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	w, res, err := subject.ReconcileThenGet(ctx, r.inner, r.client, req)
	if w == nil {
		return res, err
	}
	meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Reconciled",
		Message: "reconciled at " + time.Now().Format(time.RFC3339Nano), ObservedGeneration: w.Generation})
	return res, r.client.Status().Update(ctx, w)
}

func main() {
	subject.Main(func(mgr ctrl.Manager, inner *widget.Reconciler) reconcile.Reconciler {
		return &statusEveryPass{inner: inner, client: mgr.GetClient()}
	})
}
