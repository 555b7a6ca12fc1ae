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
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcile-lab/reconcile-lab/samples/go-controller/subject"
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
	w, res, err := subject.ReconcileThenGet(ctx, r.inner, r.client, req)
	if w == nil {
		return res, err
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
		if err := controllerutil.SetOwnerReference(w, &child, r.scheme); err != nil {
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
	subject.Main(func(mgr ctrl.Manager, inner *widget.Reconciler) reconcile.Reconciler {
		return &rememberingFlavour{inner: inner, client: mgr.GetClient(), scheme: mgr.GetScheme(), made: map[types.NamespacedName]string{}}
	}, &corev1.ConfigMap{})
}
