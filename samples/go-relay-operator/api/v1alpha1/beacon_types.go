// Package v1alpha1 holds the Beacon API (namespaced) of relay.example.io.
// +kubebuilder:object:generate=true
// +groupName=relay.example.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	GroupVersion  = schema.GroupVersion{Group: "relay.example.io", Version: "v1alpha1"}
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	AddToScheme   = SchemeBuilder.AddToScheme
)

type BeaconSpec struct {
	Message string `json:"message,omitempty"`
	// Fail makes every reconcile return an error (backoff).
	Fail bool `json:"fail,omitempty"`
}

type BeaconStatus struct {
	ObservedGeneration int64  `json:"observedGeneration,omitempty"`
	Phase              string `json:"phase,omitempty"`
	LogName            string `json:"logName,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
type Beacon struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              BeaconSpec   `json:"spec,omitempty"`
	Status            BeaconStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true
type BeaconList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Beacon `json:"items"`
}

func (in *Beacon) DeepCopyInto(out *Beacon) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
}
func (in *Beacon) DeepCopy() *Beacon {
	if in == nil {
		return nil
	}
	out := new(Beacon)
	in.DeepCopyInto(out)
	return out
}
func (in *Beacon) DeepCopyObject() runtime.Object { return in.DeepCopy() }
func (in *BeaconList) DeepCopyObject() runtime.Object {
	if in == nil {
		return nil
	}
	out := new(BeaconList)
	*out = *in
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]Beacon, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

func init() { SchemeBuilder.Register(&Beacon{}, &BeaconList{}) }
