package widget

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcile-lab/reconcile-lab/bridge"
)

const (
	// Finalizer is added to every Widget and removed after cleanup.
	Finalizer = "lab.reconcile.dev/cleanup"
	// FailAnnotation makes every reconcile of the Widget return an error with its value (to show backoff).
	FailAnnotation = "lab.reconcile.dev/fail"
	// ManagedByLabel and WidgetLabel are the labels the reconciler owns on the child ConfigMap.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	WidgetLabel    = "lab.reconcile.dev/widget"
	// Name is the controller's name.
	Name = "widget"
)

// Reconciler reconciles Widgets. For a Widget it:
//  1. returns at once when the Widget is gone;
//  2. on deletion deletes the child ConfigMap it controls (already gone is success) and removes Finalizer;
//  3. returns an error when FailAnnotation is set (the queue then backs off 5, 10, 20 ms, …);
//  4. adds Finalizer when missing (a merge patch carrying resourceVersion: 409 when stale);
//  5. when a spec.dependsOn ConfigMap/Secret is missing sets Ready=False/DependencyMissing and asks for a delayed
//     requeue (DependencyRequeue), not an error;
//  6. creates the child <name>-config when missing, updates it only when its managed fields differ; a child
//     controlled by another owner is a TerminalError;
//  7. writes status (observedGeneration, childName, Ready) only when it changed.
type Reconciler struct {
	Client            client.Client
	DependencyRequeue time.Duration
}

// ChildName is the child ConfigMap's name for a Widget.
func ChildName(widget string) string { return widget + "-config" }

// SetupWithManager registers the controller: For Widget, Owns ConfigMap, wired to Reconcile Lab with the two
// bridge lines (no-ops without RECONCILE_LAB_BRIDGE).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&Widget{}).
		Owns(&corev1.ConfigMap{}).
		Named(Name).
		WithOptions(bridge.Options(mgr, Name, opts)).
		Complete(bridge.Wrap(mgr, Name, r, &Widget{}))
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	log := logf.FromContext(ctx)
	var w Widget
	if err := r.Client.Get(ctx, req.NamespacedName, &w); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !w.DeletionTimestamp.IsZero() {
		if !controllerutil.ContainsFinalizer(&w, Finalizer) {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, r.finalize(ctx, &w)
	}
	if msg, ok := w.Annotations[FailAnnotation]; ok {
		return reconcile.Result{}, fmt.Errorf("%s (annotation %s)", msg, FailAnnotation)
	}
	if !controllerutil.ContainsFinalizer(&w, Finalizer) {
		base := w.DeepCopy()
		controllerutil.AddFinalizer(&w, Finalizer)
		if err := r.Client.Patch(ctx, &w, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return reconcile.Result{}, err
		}
	}

	if missing, err := r.missingDependencies(ctx, &w); err != nil {
		return reconcile.Result{}, err
	} else if len(missing) > 0 {
		msg := "waiting for " + strings.Join(missing, ", ")
		if err := r.writeStatus(ctx, &w, metav1.ConditionFalse, "DependencyMissing", msg); err != nil {
			return reconcile.Result{}, err
		}
		return reconcile.Result{RequeueAfter: r.DependencyRequeue}, nil
	}

	desired := desiredChild(&w)
	var observed corev1.ConfigMap
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(desired), &observed)
	switch {
	case apierrors.IsNotFound(err):
		if err := r.Client.Create(ctx, desired); err != nil {
			return reconcile.Result{}, err
		}
		log.Info("created the child ConfigMap", "child", desired.Name)
	case err != nil:
		return reconcile.Result{}, err
	default:
		if owner := metav1.GetControllerOf(&observed); owner != nil && owner.UID != w.UID {
			msg := fmt.Sprintf("ConfigMap %s is controlled by %s %s (uid %s)", observed.Name, owner.Kind, owner.Name, owner.UID)
			if err := r.writeStatus(ctx, &w, metav1.ConditionFalse, "ChildConflict", msg); err != nil {
				return reconcile.Result{}, err
			}
			return reconcile.Result{}, reconcile.TerminalError(errors.New(msg))
		}
		if drift := childDrift(&observed, desired); len(drift) > 0 {
			updated := observed.DeepCopy()
			if updated.Labels == nil {
				updated.Labels = map[string]string{}
			}
			maps.Copy(updated.Labels, desired.Labels)
			updated.Data = desired.Data
			if err := controllerutil.SetControllerReference(&w, updated, r.Client.Scheme()); err != nil {
				return reconcile.Result{}, err
			}
			if err := r.Client.Update(ctx, updated); err != nil {
				return reconcile.Result{}, err
			}
			log.Info("child drifted; updated", "child", observed.Name, "drift", drift)
		}
	}
	return reconcile.Result{}, r.writeStatus(ctx, &w, metav1.ConditionTrue, "Reconciled", fmt.Sprintf("ConfigMap %s matches spec.data", desired.Name))
}

func (r *Reconciler) finalize(ctx context.Context, w *Widget) error {
	var child corev1.ConfigMap
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: w.Namespace, Name: ChildName(w.Name)}, &child)
	if err == nil && metav1.IsControlledBy(&child, w) {
		if err := r.Client.Delete(ctx, &child, client.Preconditions{UID: &child.UID}); client.IgnoreNotFound(err) != nil {
			return err
		}
	} else if client.IgnoreNotFound(err) != nil {
		return err
	}
	base := w.DeepCopy()
	controllerutil.RemoveFinalizer(w, Finalizer)
	return client.IgnoreNotFound(r.Client.Patch(ctx, w, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})))
}

func (r *Reconciler) missingDependencies(ctx context.Context, w *Widget) ([]string, error) {
	var missing []string
	for _, d := range w.Spec.DependsOn {
		var obj client.Object = &corev1.ConfigMap{}
		if d.Kind == "Secret" {
			obj = &corev1.Secret{}
		}
		err := r.Client.Get(ctx, types.NamespacedName{Namespace: w.Namespace, Name: d.Name}, obj)
		if apierrors.IsNotFound(err) {
			missing = append(missing, fmt.Sprintf("%s %s/%s", d.Kind, w.Namespace, d.Name))
		} else if err != nil {
			return nil, err
		}
	}
	return missing, nil
}

// writeStatus sets observedGeneration, childName and the Ready condition, and writes /status only when that
// changed anything.
func (r *Reconciler) writeStatus(ctx context.Context, w *Widget, status metav1.ConditionStatus, reason, message string) error {
	next := w.Status.DeepCopyStatus()
	next.ObservedGeneration = w.Generation
	next.ChildName = ChildName(w.Name)
	meta.SetStatusCondition(&next.Conditions, metav1.Condition{Type: "Ready", Status: status, Reason: reason, Message: message, ObservedGeneration: w.Generation})
	if equality.Semantic.DeepEqual(next, w.Status) {
		return nil
	}
	w.Status = next
	return r.Client.Status().Update(ctx, w)
}

// DeepCopyStatus copies a status.
func (s WidgetStatus) DeepCopyStatus() WidgetStatus {
	out := s
	if s.Conditions != nil {
		out.Conditions = make([]metav1.Condition, len(s.Conditions))
		for i := range s.Conditions {
			s.Conditions[i].DeepCopyInto(&out.Conditions[i])
		}
	}
	return out
}

func desiredChild(w *Widget) *corev1.ConfigMap {
	yes := true
	data := map[string]string{}
	maps.Copy(data, w.Spec.Data)
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name: ChildName(w.Name), Namespace: w.Namespace,
			Labels: map[string]string{ManagedByLabel: "reconcile-lab", WidgetLabel: w.Name},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: GroupVersion.String(), Kind: "Widget", Name: w.Name, UID: w.UID,
				Controller: &yes, BlockOwnerDeletion: &yes,
			}},
		},
		Data: data,
	}
}

func childDrift(observed, desired *corev1.ConfigMap) []string {
	var out []string
	if !equality.Semantic.DeepEqual(nonNil(observed.Data), desired.Data) {
		out = append(out, "data")
	}
	for k, v := range desired.Labels {
		if observed.Labels[k] != v {
			out = append(out, "labels")
			break
		}
	}
	if ref := metav1.GetControllerOf(observed); ref == nil || ref.UID != desired.OwnerReferences[0].UID {
		out = append(out, "ownerReference")
	}
	return out
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
