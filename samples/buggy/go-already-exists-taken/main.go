// Command go-already-exists-taken is the sample Widget controller (samples/go-controller) with one classic bug: each
// Widget also gets a token Secret ("<widget>-token", owned by the Widget), looked up in the manager's cache and
// created when the cache has none (once the Widget carries its finalizer, before the correct reconciler runs). When that create answers AlreadyExists, the controller concludes that someone
// else owns the name, marks the Widget with the annotation lab.reconcile.dev/token: taken and, trusting that mark,
// never looks at the token again. But a cache lags behind the controller's own writes: a reconcile that runs right
// after the create, before its watch event reached the cache, finds no token, creates it again and gets
// AlreadyExists for its own Secret. The robustness checks' stale-cache check finds it in its view in which only the
// Secrets lag (the cache of that kind alone frozen before the controller created it): the controller never comes
// back to the settled state (reconcile-lab check --go "go run ."). Fix: an AlreadyExists means the object exists;
// return the error (the reconcile is retried once the cache caught up) or read it from the server. Not for use: a
// test subject.
package main

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcile-lab/reconcile-lab/samples/go-controller/subject"
	"github.com/reconcile-lab/reconcile-lab/samples/go-controller/widget"
)

// takenAnnotation is the mark the bug leaves on a Widget whose token create answered AlreadyExists.
const takenAnnotation = "lab.reconcile.dev/token"

// tokenKeeper runs the correct reconciler, then keeps the token Secret.
type tokenKeeper struct {
	inner  *widget.Reconciler
	client client.Client
	scheme *runtime.Scheme
}

func (r *tokenKeeper) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var w widget.Widget
	if err := r.client.Get(ctx, req.NamespacedName, &w); err == nil && w.DeletionTimestamp.IsZero() && controllerutil.ContainsFinalizer(&w, widget.Finalizer) {
		if err := r.keepToken(ctx, &w); err != nil {
			return reconcile.Result{}, err
		}
	}
	return r.inner.Reconcile(ctx, req)
}

// keepToken creates the token Secret when the cache has none, once the Widget carries its finalizer.
func (r *tokenKeeper) keepToken(ctx context.Context, w *widget.Widget) error {
	if w.Annotations[takenAnnotation] == "taken" {
		return nil // BUG (the second half): the mark is trusted, the token never looked at again
	}
	name := types.NamespacedName{Namespace: w.Namespace, Name: w.Name + "-token"}
	var token corev1.Secret
	if err := r.client.Get(ctx, name, &token); !apierrors.IsNotFound(err) {
		return err
	}
	token = corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name.Name, Namespace: name.Namespace}, StringData: map[string]string{"token": "t0k3n"}}
	if err := controllerutil.SetControllerReference(w, &token, r.scheme); err != nil {
		return err
	}
	err := r.client.Create(ctx, &token)
	if apierrors.IsAlreadyExists(err) {
		// BUG: it may well be ours, made a moment ago and not in the cache yet.
		patch := client.MergeFrom(w.DeepCopy())
		if w.Annotations == nil {
			w.Annotations = map[string]string{}
		}
		w.Annotations[takenAnnotation] = "taken"
		return r.client.Patch(ctx, w, patch)
	}
	if err != nil {
		return err
	}
	// Waits (up to 5 s) until the cache holds the new token, so that this process's own next reconcile never misses
	// it: the sample's runs are then deterministic, and only a view whose Secrets lag (the checks') shows the bug.
	return wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 5*time.Second, true, func(ctx context.Context) (bool, error) {
		return r.client.Get(ctx, name, &corev1.Secret{}) == nil, nil
	})
}

func main() {
	subject.Main(func(mgr ctrl.Manager, inner *widget.Reconciler) reconcile.Reconciler {
		return &tokenKeeper{inner: inner, client: mgr.GetClient(), scheme: mgr.GetScheme()}
	}, &corev1.ConfigMap{}, &corev1.Secret{})
}
