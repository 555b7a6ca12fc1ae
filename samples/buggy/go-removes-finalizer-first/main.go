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

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcile-lab/reconcile-lab/samples/go-controller/subject"
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
	subject.Main(func(mgr ctrl.Manager, inner *widget.Reconciler) reconcile.Reconciler {
		return &registryAfterFinalizer{inner: inner, client: mgr.GetClient()}
	})
}
