// Command go-never-prunes-keys is the sample Widget controller (samples/go-controller) with one classic bug: each
// Widget also gets an "env" ConfigMap ("<widget>-env") with one WIDGET_<KEY> entry per spec.data key, written with
// controllerutil.CreateOrUpdate whose mutate function sets the entries the spec has into the existing map and never
// removes one. A key added to spec.data reaches the child (a Widget created with it gets the same child, so the
// history check's path and restart runs pass), but a key removed from spec.data stays in the child for good: the
// robustness checks' history check finds it when it sets the change back (reconcile-lab check --go "go run ."
// --transition '{"spec":{"data":{"tier":"gold"}}}'). Fix: build the whole map from the current spec in the mutate
// function (cm.Data = desired) instead of merging into what the server returned. Not for use: a test subject.
package main

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcile-lab/reconcile-lab/samples/go-controller/subject"
	"github.com/reconcile-lab/reconcile-lab/samples/go-controller/widget"
)

// envChild runs the correct reconciler, then keeps the env child, merging into its data (the bug).
type envChild struct {
	inner  *widget.Reconciler
	client client.Client
	scheme *runtime.Scheme
}

func (r *envChild) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	w, res, err := subject.ReconcileThenGet(ctx, r.inner, r.client, req)
	if w == nil {
		return res, err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: req.Name + "-env", Namespace: req.Namespace}}
	_, err = controllerutil.CreateOrUpdate(ctx, r.client, cm, func() error {
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		// BUG: the spec's entries are set into the map the server returned; an entry the spec no longer has stays.
		for k, v := range w.Spec.Data {
			cm.Data["WIDGET_"+strings.ToUpper(k)] = v
		}
		return controllerutil.SetControllerReference(w, cm, r.scheme)
	})
	return res, err
}

func main() {
	subject.Main(func(mgr ctrl.Manager, inner *widget.Reconciler) reconcile.Reconciler {
		return &envChild{inner: inner, client: mgr.GetClient(), scheme: mgr.GetScheme()}
	}, &corev1.ConfigMap{})
}
