// Command go-filters-child-events is the sample Widget controller (samples/go-controller) with one classic bug: its
// builder calls WithEventFilter(predicate.GenerationChangedPredicate{}) to stop status writes from re-triggering the
// Widget. WithEventFilter applies to every watch of the controller, the owned ConfigMaps' too, and a ConfigMap's
// metadata.generation never changes: every update of the child is dropped. A child deleted by someone else is
// restored (the predicate lets deletes through), a spec change is reconciled (it moves the Widget's generation), but
// a child edited by someone else (`kubectl edit`, another tool) keeps the edit until the Widget's spec changes. The
// robustness checks' child drift check finds it (reconcile-lab check --go "go run ."). Fix: give the predicate to
// For only — For(&Widget{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})). Not for use: a test
// subject.
package main

import (
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcile-lab/reconcile-lab/samples/go-controller/subject"
	"github.com/reconcile-lab/reconcile-lab/samples/go-controller/widget"
)

func main() {
	// BUG: an event filter for every watch, where only the Widgets' updates were meant.
	subject.MainWithEventFilter(predicate.GenerationChangedPredicate{}, func(_ ctrl.Manager, inner *widget.Reconciler) reconcile.Reconciler {
		return inner
	}, &corev1.ConfigMap{})
}
