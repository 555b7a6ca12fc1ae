package bridge

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestDeletionRequested: an update that sets deletionTimestamp (a delete of an object with finalizers) is marked in
// its cause; an update of an object already terminating, or of a live one, is not.
func TestDeletionRequested(t *testing.T) {
	now := metav1.NewTime(time.Unix(1764588000, 0))
	live := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "7", Finalizers: []string{"x/y"}}}
	deleting := live.DeepCopy()
	deleting.ResourceVersion, deleting.DeletionTimestamp = "8", &now
	later := deleting.DeepCopy()
	later.ResourceVersion, later.Finalizers = "9", nil
	key := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "a"}}
	for _, tc := range []struct {
		name     string
		old, new *corev1.ConfigMap
		want     bool
	}{
		{"the delete of an object with finalizers", live, deleting, true},
		{"a later update of the terminating object", deleting, later, false},
		{"an update of a live object", live, live.DeepCopy(), false},
	} {
		ev := eventFor("update", "configmaps.v1", "ConfigMap", tc.new, false, now.Time).withDeletion(tc.old, tc.new)
		c := causeFor(ev, priorityqueue.AddOpts{}, key, 0, forType{resource: "configmaps", kind: "ConfigMap"})
		if c.DeletionRequested != tc.want || c.Kind != CauseInformer {
			t.Errorf("%s: cause %+v, want deletionRequested %v", tc.name, c, tc.want)
		}
	}
}
