package controller

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcile-lab/reconcile-lab/bridge"

	fleetv1beta1 "example.com/harbor-operator/api/v1beta1"
)

// HarborReconciler reconciles a cluster-scoped Harbor: it keeps a ConfigMap harbor-<name> (in spec.namespace, default
// "default") controlled by the Harbor and writes status.phase. spec.mode drives the outcomes a test needs: "fail"
// (an error every time), "terminal" (a TerminalError), "panic" (panics once), "wait" (RequeueAfter 30 s), "crash"
// (the program exits with code 3).
type HarborReconciler struct {
	client.Client
	panicked atomic.Bool
}

func (r *HarborReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)
	var h fleetv1beta1.Harbor
	if err := r.Get(ctx, req.NamespacedName, &h); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	switch h.Spec.Mode {
	case "fail":
		return ctrl.Result{}, errors.New("the harbor master is out to lunch")
	case "terminal":
		return ctrl.Result{}, reconcile.TerminalError(fmt.Errorf("harbor %s cannot be fixed by retrying", h.Name))
	case "panic":
		if r.panicked.CompareAndSwap(false, true) {
			panic("harbor keeper fell into the water")
		}
	case "crash":
		// A controller that gives up (log.Fatal and friends): the whole program exits.
		log.Info("the harbor sank; exiting")
		os.Exit(3)
	}
	ns := h.Spec.Namespace
	if ns == "" {
		ns = "default"
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "harbor-" + h.Name, Namespace: ns}}
	op, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Data = map[string]string{"berths": fmt.Sprint(h.Spec.Berths)}
		return controllerutil.SetControllerReference(&h, cm, r.Scheme())
	})
	if err != nil {
		return ctrl.Result{}, err
	}
	log.Info("config map", "op", op)
	phase := "Open"
	if h.Spec.Mode == "wait" {
		phase = "Waiting"
	}
	if h.Status.Phase != phase || h.Status.ObservedGeneration != h.Generation {
		h.Status.Phase = phase
		h.Status.ObservedGeneration = h.Generation
		if err := r.Status().Update(ctx, &h); err != nil {
			if apierrors.IsConflict(err) {
				return ctrl.Result{Requeue: true}, nil
			}
			return ctrl.Result{}, err
		}
	}
	if h.Spec.Mode == "wait" {
		return ctrl.Result{RequeueAfter: 30 * time.Second}, nil
	}
	return ctrl.Result{}, nil
}

// skipIgnored drops events for Harbors labelled fleet.example.io/ignore.
func skipIgnored() predicate.Predicate {
	keep := func(o client.Object) bool { return o.GetLabels()["fleet.example.io/ignore"] == "" }
	return predicate.Funcs{
		CreateFunc:  func(e event.CreateEvent) bool { return keep(e.Object) },
		UpdateFunc:  func(e event.UpdateEvent) bool { return keep(e.ObjectNew) },
		DeleteFunc:  func(e event.DeleteEvent) bool { return keep(e.Object) },
		GenericFunc: func(e event.GenericEvent) bool { return keep(e.Object) },
	}
}

// SetupWithManager sets up the controller with the Manager.
func (r *HarborReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&fleetv1beta1.Harbor{}).
		Owns(&corev1.ConfigMap{}).
		WithEventFilter(skipIgnored()).
		Named("harbor-keeper").
		WithOptions(bridge.Options(mgr, "harbor-keeper", controller.Options{})).
		Complete(bridge.Wrap(mgr, "harbor-keeper", r, &fleetv1beta1.Harbor{}))
}
