// Package widget is the sample Widget controller (samples/crd.yaml), the Go twin of the lab reconciler
// (src/core/reconcilers/labReconciler.ts), wired to Reconcile Lab through the bridge.
package widget

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion of the lab's custom resource.
var GroupVersion = schema.GroupVersion{Group: "lab.reconcile.dev", Version: "v1alpha1"}

// Widget is the lab's custom resource: its spec is the desired data of a child ConfigMap <name>-config.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetSpec   `json:"spec,omitempty"`
	Status            WidgetStatus `json:"status,omitempty"`
}

// WidgetSpec is the desired state.
type WidgetSpec struct {
	Data      map[string]string `json:"data,omitempty"`
	DependsOn []Dependency      `json:"dependsOn,omitempty"`
}

// Dependency is a ConfigMap or Secret (same namespace) that must exist before the child is written.
type Dependency struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// WidgetStatus is written through /status only when it changes.
type WidgetStatus struct {
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	ChildName          string             `json:"childName,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
}

// WidgetList is a list of Widgets.
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}

// AddToScheme registers Widget and WidgetList.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// DeepCopyInto copies w into out.
func (w *Widget) DeepCopyInto(out *Widget) {
	*out = *w
	out.TypeMeta = w.TypeMeta
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if w.Spec.Data != nil {
		out.Spec.Data = make(map[string]string, len(w.Spec.Data))
		for k, v := range w.Spec.Data {
			out.Spec.Data[k] = v
		}
	}
	if w.Spec.DependsOn != nil {
		out.Spec.DependsOn = append([]Dependency(nil), w.Spec.DependsOn...)
	}
	if w.Status.Conditions != nil {
		out.Status.Conditions = make([]metav1.Condition, len(w.Status.Conditions))
		for i := range w.Status.Conditions {
			w.Status.Conditions[i].DeepCopyInto(&out.Status.Conditions[i])
		}
	}
}

// DeepCopy returns a deep copy.
func (w *Widget) DeepCopy() *Widget {
	if w == nil {
		return nil
	}
	out := new(Widget)
	w.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (w *Widget) DeepCopyObject() runtime.Object { return w.DeepCopy() }

// DeepCopyObject implements runtime.Object.
func (l *WidgetList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := &WidgetList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]Widget, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}
