package controller

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/reconcile-lab/reconcile-lab/bridge"

	relayv1alpha1 "example.com/relay-operator/api/v1alpha1"
)

const (
	Finalizer   = "relay.example.io/cleanup"
	BeaconLabel = "relay.example.io/beacon"
	FieldOwner  = "beacon-controller"
)

// BeaconReconciler lights a Beacon: an SSA'd ConfigMap, a generated log ConfigMap, an external file; a finalizer
// removes all of it.
type BeaconReconciler struct {
	client.Client
	Recorder    events.EventRecorder
	Pings       chan event.GenericEvent
	ExternalDir string
}

func (r *BeaconReconciler) externalPath(b *relayv1alpha1.Beacon) string {
	return filepath.Join(r.ExternalDir, b.Namespace+"_"+b.Name)
}

func (r *BeaconReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	lg := log.FromContext(ctx)
	var b relayv1alpha1.Beacon
	if err := r.Get(ctx, req.NamespacedName, &b); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !b.DeletionTimestamp.IsZero() {
		if !controllerutil.ContainsFinalizer(&b, Finalizer) {
			return ctrl.Result{}, nil
		}
		if !bridge.IsDryRun(ctx) {
			if err := os.Remove(r.externalPath(&b)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return ctrl.Result{}, err
			}
		}
		if err := r.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(b.Namespace), client.MatchingLabels{BeaconLabel: b.Name}); err != nil {
			return ctrl.Result{}, err
		}
		before := b.DeepCopy()
		controllerutil.RemoveFinalizer(&b, Finalizer)
		if err := r.Patch(ctx, &b, client.MergeFrom(before)); err != nil {
			return ctrl.Result{}, err
		}
		lg.Info("beacon cleaned up")
		return ctrl.Result{}, nil
	}
	if !controllerutil.ContainsFinalizer(&b, Finalizer) {
		before := b.DeepCopy()
		controllerutil.AddFinalizer(&b, Finalizer)
		if err := r.Patch(ctx, &b, client.MergeFrom(before)); err != nil {
			return ctrl.Result{}, err
		}
	}
	if b.Spec.Fail {
		r.Recorder.Eventf(&b, nil, corev1.EventTypeWarning, "Failing", "Reconcile", "spec.fail is set")
		return ctrl.Result{}, fmt.Errorf("beacon %s: spec.fail is set", req.Name)
	}
	// Server-side apply of the beacon's ConfigMap.
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "beacon-" + b.Name, Namespace: b.Namespace, Labels: map[string]string{BeaconLabel: b.Name}},
		Data:       map[string]string{"message": b.Spec.Message},
	}
	if err := controllerutil.SetControllerReference(&b, cm, r.Scheme()); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.Patch(ctx, cm, client.Apply, client.ForceOwnership, client.FieldOwner(FieldOwner)); err != nil { //nolint:staticcheck
		return ctrl.Result{}, err
	}
	// The newer typed server-side apply: client.Apply with an apply configuration.
	ac := corev1ac.ConfigMap("beacon-"+b.Name+"-applied", b.Namespace).
		WithLabels(map[string]string{BeaconLabel: b.Name}).
		WithData(map[string]string{"message": b.Spec.Message}).
		WithOwnerReferences(metav1ac.OwnerReference().WithAPIVersion(relayv1alpha1.GroupVersion.String()).WithKind("Beacon").
			WithName(b.Name).WithUID(b.UID).WithController(true).WithBlockOwnerDeletion(true))
	if err := r.Apply(ctx, ac, client.ForceOwnership, client.FieldOwner(FieldOwner)); err != nil {
		return ctrl.Result{}, err
	}
	if !bridge.IsDryRun(ctx) {
		if err := os.MkdirAll(r.ExternalDir, 0o755); err != nil {
			return ctrl.Result{}, err
		}
		if err := os.WriteFile(r.externalPath(&b), []byte(b.Spec.Message), 0o644); err != nil {
			return ctrl.Result{}, err
		}
	}
	before := b.DeepCopy()
	if b.Status.LogName == "" {
		logCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "beacon-" + b.Name + "-log-", Namespace: b.Namespace,
			Labels: map[string]string{BeaconLabel: b.Name}}, Data: map[string]string{"lit": time.Now().UTC().Format(time.RFC3339)}}
		if err := controllerutil.SetControllerReference(&b, logCM, r.Scheme()); err != nil {
			return ctrl.Result{}, err
		}
		if err := r.Create(ctx, logCM); err != nil {
			return ctrl.Result{}, err
		}
		b.Status.LogName = logCM.Name
	}
	b.Status.Phase = "Lit"
	b.Status.ObservedGeneration = b.Generation
	if b.Status != before.Status {
		if err := r.Status().Patch(ctx, &b, client.MergeFrom(before)); err != nil {
			if apierrors.IsConflict(err) {
				return ctrl.Result{Requeue: true}, nil //nolint:staticcheck
			}
			return ctrl.Result{}, err
		}
		r.Recorder.Eventf(&b, nil, corev1.EventTypeNormal, "Lit", "Reconcile", "beacon lit: %s", b.Spec.Message)
	}
	return ctrl.Result{}, nil
}

// SetupWithManager: a builder controller with a channel source and a metadata-only owned child, its own slow
// rate limiter and four workers.
func (r *BeaconReconciler) SetupWithManager(mgr ctrl.Manager) error {
	opts := controller.Options{
		MaxConcurrentReconciles: 4,
		RateLimiter:             workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](250*time.Millisecond, 30*time.Second),
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&relayv1alpha1.Beacon{}).
		Owns(&corev1.ConfigMap{}, builder.OnlyMetadata).
		WatchesRawSource(source.Channel(r.Pings, &handler.EnqueueRequestForObject{})).
		Named("beacon").
		WithOptions(bridge.Options(mgr, "beacon", opts)).
		Complete(bridge.Wrap(mgr, "beacon", r, &relayv1alpha1.Beacon{}))
}

// Pinger sends a GenericEvent for every Beacon annotated relay.example.io/ping every Every.
type Pinger struct {
	Client client.Reader
	Pings  chan event.GenericEvent
	Every  time.Duration
}

func (p *Pinger) Start(ctx context.Context) error {
	t := time.NewTicker(p.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		var l relayv1alpha1.BeaconList
		if err := p.Client.List(ctx, &l); err != nil {
			continue
		}
		for i := range l.Items {
			if l.Items[i].Annotations["relay.example.io/ping"] != "" {
				select {
				case p.Pings <- event.GenericEvent{Object: &l.Items[i]}:
				case <-ctx.Done():
					return nil
				}
			}
		}
	}
}
