package controller

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/reconcile-lab/reconcile-lab/bridge"
)

// LampReconciler marks every Secret labelled app=lamp (the cache holds only those) as seen.
type LampReconciler struct {
	client.Client
}

func (r *LampReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var s corev1.Secret
	if err := r.Get(ctx, req.NamespacedName, &s); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if s.Annotations["lamp.example.io/seen"] == "true" {
		return ctrl.Result{}, nil
	}
	before := s.DeepCopy()
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	s.Annotations["lamp.example.io/seen"] = "true"
	return ctrl.Result{}, r.Patch(ctx, &s, client.MergeFrom(before))
}

// SetupWithManager builds the controller with the low-level API: controller.New + Watch(source.Kind).
func (r *LampReconciler) SetupWithManager(mgr ctrl.Manager) error {
	c, err := controller.New("lamp-keeper", mgr, bridge.Options(mgr, "lamp-keeper", controller.Options{
		Reconciler:              bridge.Wrap(mgr, "lamp-keeper", r, &corev1.Secret{}),
		MaxConcurrentReconciles: 2,
		RateLimiter:             workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](time.Second, time.Minute),
	}))
	if err != nil {
		return err
	}
	return c.Watch(source.Kind(mgr.GetCache(), &corev1.Secret{}, &handler.TypedEnqueueRequestForObject[*corev1.Secret]{}))
}
