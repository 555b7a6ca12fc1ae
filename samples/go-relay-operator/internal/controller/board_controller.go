package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/reconcile-lab/reconcile-lab/bridge"

	relayv1alpha1 "example.com/relay-operator/api/v1alpha1"
)

// BoardName is the ConfigMap the board controller keeps in each namespace with Beacons.
const BoardName = "relay-board"

// BoardKey is the board controller's request: a custom request type naming a namespace, not an object (one
// reconcile per namespace however many of its Beacons changed).
type BoardKey struct {
	Namespace string
}

// BoardReconciler keeps the ConfigMap relay-board of a namespace listing its Beacons and their phases.
type BoardReconciler struct {
	client.Client
}

func (r *BoardReconciler) Reconcile(ctx context.Context, k BoardKey) (reconcile.Result, error) {
	var list relayv1alpha1.BeaconList
	if err := r.List(ctx, &list, client.InNamespace(k.Namespace)); err != nil {
		return reconcile.Result{}, err
	}
	lines := make([]string, 0, len(list.Items))
	for _, b := range list.Items {
		lines = append(lines, fmt.Sprintf("%s=%s", b.Name, b.Status.Phase))
	}
	slices.Sort(lines)
	board := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: BoardName}}
	_, err := controllerutil.CreateOrUpdate(ctx, r.Client, board, func() error {
		board.Data = map[string]string{"beacons": strings.Join(lines, "\n")}
		return nil
	})
	return reconcile.Result{}, err
}

// SetupWithManager builds the typed controller "beacon-board": a Beacon watch mapped to its namespace's BoardKey.
// The bridge takes the same two lines as for reconcile.Request (bridge.Options is generic; the reconciler goes
// through bridge.WrapTyped with the type named).
func (r *BoardReconciler) SetupWithManager(mgr ctrl.Manager) error {
	perNamespace := handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, b *relayv1alpha1.Beacon) []BoardKey {
		return []BoardKey{{Namespace: b.Namespace}}
	})
	return builder.TypedControllerManagedBy[BoardKey](mgr).
		Named("beacon-board").
		WithOptions(bridge.Options(mgr, "beacon-board", controller.TypedOptions[BoardKey]{})).
		WatchesRawSource(source.TypedKind(mgr.GetCache(), &relayv1alpha1.Beacon{}, perNamespace)).
		Complete(bridge.WrapTyped[BoardKey](mgr, "beacon-board", r, &relayv1alpha1.Beacon{}))
}
