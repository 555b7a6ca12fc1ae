package bridge

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// TestDryRunOnlyForcesEveryWrite: in a dry-run-only process every write through the bridge client is sent with
// dryRun=All and journaled so, also one made outside any reconcile (a controller without bridge.Options, a
// Runnable): nothing reaches the store.
func TestDryRunOnlyForcesEveryWrite(t *testing.T) {
	real := realClient(t)
	ns := scratchNamespace(t, real)
	e := newTestEditor(t, false)
	h := connectedHub(t, e)
	h.dryRunOnly = true
	c := newClient(h, real)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "outside", Namespace: ns}, Data: map[string]string{"a": "1"}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if w := nextWrite(t, e); !w.DryRun || w.Verb != "create" {
		t.Fatalf("a write outside any reconcile of a dry-run-only process was journaled as %+v, want a dry run", w)
	}
	if err := real.Get(ctx, types.NamespacedName{Namespace: ns, Name: "outside"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the object was stored (get: %v)", err)
	}
	// An object that exists: an update in a reconcile (not a dry-run step) is not stored either.
	stored := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "stored", Namespace: ns}, Data: map[string]string{"a": "1"}}
	if err := real.Create(ctx, stored); err != nil {
		t.Fatal(err)
	}
	rctx := withReconcileInfo(ctx, &reconcileInfo{controller: "c", key: ns + "/stored", id: "r-1"})
	stored.Data["a"] = "2"
	if err := c.Update(rctx, stored); err != nil {
		t.Fatal(err)
	}
	if w := nextWrite(t, e); !w.DryRun {
		t.Fatalf("an update in a reconcile of a dry-run-only process was journaled as %+v, want a dry run", w)
	}
	got := &corev1.ConfigMap{}
	if err := real.Get(ctx, types.NamespacedName{Namespace: ns, Name: "stored"}, got); err != nil || got.Data["a"] != "1" {
		t.Fatalf("the update was stored: %v %v", got.Data, err)
	}
}

// noManager is a non-nil manager.Manager for guardDryRunOnly (it only checks that one was given).
type noManager struct{ manager.Manager }

// TestGuardDryRunOnly: a dry-run-only process whose manager client is not the bridge client exits with status 2 at
// its first bridge.Options / bridge.Wrap; with the bridge client, or not dry-run-only, or before a manager exists,
// it goes on.
func TestGuardDryRunOnly(t *testing.T) {
	for _, tc := range []struct {
		name                string
		dryRunOnly, wrapped bool
		mgr                 manager.Manager
		exits               bool
	}{
		{"dry-run-only without the bridge client", true, false, noManager{}, true},
		{"dry-run-only with the bridge client", true, true, noManager{}, false},
		{"not dry-run-only", false, false, noManager{}, false},
		{"no manager given", true, false, nil, false},
	} {
		h := &hub{dryRunOnly: tc.dryRunOnly}
		h.clientWrapped.Store(tc.wrapped)
		code := -1
		h.exit = func(c int) { code = c }
		h.guardDryRunOnly(tc.mgr)
		if exited := code == 2; exited != tc.exits {
			t.Errorf("%s: exit code %d, want exit: %v", tc.name, code, tc.exits)
		}
	}
}
