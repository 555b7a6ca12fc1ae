package bridge

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestAttachedProgramNeverQueuesScratchCopies: a program attached to the editor that watches every namespace (as
// most do) never queues or reconciles the robustness checks' scratch copies — an object in an rl-check-… namespace,
// or one labelled checks.reconcile-lab.dev/scratch — while it still queues its own objects. Before, such a program
// queued every copy a check made (a paused one kept their keys after the checks, and a Step stepped one of them).
func TestAttachedProgramNeverQueuesScratchCopies(t *testing.T) {
	plain := realClient(t)
	ns := scratchNamespace(t, plain)
	scratch := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: ScratchNamespacePrefix, Labels: map[string]string{ScratchLabel: "true"}}}
	if err := plain.Create(context.Background(), scratch); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = plain.Delete(context.Background(), scratch) })
	e := newTestEditor(t, false)
	h := connectedHub(t, e)
	mopts := testManagerOptions(ns)
	mopts.Cache = cache.Options{} // every namespace: one informer, so events arrive in the order they were written
	setupWith(h, &mopts)
	mgr, err := manager.New(realConfig(t), mopts)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	reconciled := map[string]bool{}
	rec := reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
		mu.Lock()
		reconciled[req.String()] = true
		mu.Unlock()
		return reconcile.Result{}, nil
	})
	if err := builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).
		WithOptions(optionsFor(h, mgr, "configmap", controller.Options{})).
		Complete(wrapTyped(h, mgr, "configmap", rec, &corev1.ConfigMap{})); err != nil {
		t.Fatal(err)
	}
	startManager(t, mgr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("the cache did not sync")
	}

	inScratch := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: scratch.Name, Name: "copy"}}
	labelled := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "labelled-copy", Labels: map[string]string{ScratchLabel: "true"}}}
	own := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "own"}}
	for _, cm := range []*corev1.ConfigMap{inScratch, labelled, own} {
		if err := plain.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	copies := map[string]bool{scratch.Name + "/copy": true, ns + "/labelled-copy": true}
	var queued []string
	e.next(func(m map[string]any) bool {
		if m["type"] != "queue" {
			return false
		}
		key, _ := m["key"].(string)
		if copies[key] {
			queued = append(queued, key)
		}
		return key == ns+"/own" && m["transition"] == "done"
	})
	mu.Lock()
	defer mu.Unlock()
	if len(queued) > 0 || reconciled[scratch.Name+"/copy"] || reconciled[ns+"/labelled-copy"] {
		t.Fatalf("the attached program queued scratch copies %v (reconciled %v)", queued, reconciled)
	}
	if !reconciled[ns+"/own"] {
		t.Fatalf("the program's own ConfigMap was not reconciled: %v", reconciled)
	}
}

func TestIsScratchCopy(t *testing.T) {
	for _, c := range []struct {
		obj  any
		want bool
	}{
		{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "rl-check-0a1b2c3d", Name: "x"}}, true},
		{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "rl-check-0a1b2c3d", Labels: map[string]string{ScratchLabel: "true"}}}, true},
		{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "rl-check-lookalike"}}, false},
		{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "x"}}, false},
		{"not an object", false},
	} {
		if got := isScratchCopy(c.obj); got != c.want {
			t.Errorf("isScratchCopy(%v) = %v, want %v", c.obj, got, c.want)
		}
	}
}
