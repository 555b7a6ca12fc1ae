// Package v1beta1 holds the Harbor API (cluster-scoped) of fleet.example.io.
package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	GroupVersion  = schema.GroupVersion{Group: "fleet.example.io", Version: "v1beta1"}
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	AddToScheme   = SchemeBuilder.AddToScheme
)

type HarborSpec struct {
	Berths    int32  `json:"berths,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Mode      string `json:"mode,omitempty"`
}

type HarborStatus struct {
	ObservedGeneration int64  `json:"observedGeneration,omitempty"`
	Phase              string `json:"phase,omitempty"`
}

// Harbor is cluster-scoped.
type Harbor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              HarborSpec   `json:"spec,omitempty"`
	Status            HarborStatus `json:"status,omitempty"`
}

type HarborList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Harbor `json:"items"`
}

func (in *Harbor) DeepCopyInto(out *Harbor) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
}
func (in *Harbor) DeepCopy() *Harbor {
	if in == nil {
		return nil
	}
	out := new(Harbor)
	in.DeepCopyInto(out)
	return out
}
func (in *Harbor) DeepCopyObject() runtime.Object { return in.DeepCopy() }
func (in *HarborList) DeepCopyObject() runtime.Object {
	if in == nil {
		return nil
	}
	out := new(HarborList)
	*out = *in
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]Harbor, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

func init() { SchemeBuilder.Register(&Harbor{}, &HarborList{}) }
