package controller

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcile-lab/reconcile-lab/bridge"
)

// TargetLabel on a ConfigMap names the Deployment (same namespace) it configures.
const TargetLabel = "shipyard.example.io/deployment"

// DeploymentReconciler keeps a Secret named like every Deployment, controlled by it.
type DeploymentReconciler struct {
	client.Client
	Workers int
}

func (r *DeploymentReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var d appsv1.Deployment
	if err := r.Get(ctx, req.NamespacedName, &d); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// Named like the Deployment, as kubebuilder projects often name their children.
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: d.Name, Namespace: d.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, s, func() error {
		s.StringData = nil
		if s.Data == nil {
			s.Data = map[string][]byte{}
		}
		s.Data["owner"] = []byte(d.Name)
		return controllerutil.SetControllerReference(&d, s, r.Scheme())
	}); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: 10 * time.Minute}, nil
}

func (r *DeploymentReconciler) configMapToDeployment(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[TargetLabel]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
}

// SetupWithManager uses the default name (the lower-cased kind: "deployment") and the client-go queue.
func (r *DeploymentReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&appsv1.Deployment{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&corev1.Secret{}).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.configMapToDeployment)).
		WithOptions(bridge.Options(mgr, "deployment", controller.Options{MaxConcurrentReconciles: 3, UsePriorityQueue: ptr.To(false)})).
		Complete(bridge.Wrap(mgr, "deployment", r, &appsv1.Deployment{}))
}
