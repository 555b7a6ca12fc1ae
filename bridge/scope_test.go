package bridge

import (
	"context"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

type noopReconciler struct{}

func (noopReconciler) Reconcile(context.Context, reconcile.Request) (reconcile.Result, error) {
	return reconcile.Result{}, nil
}

// replyTo is the editor's reply to command id.
func replyTo(e *testEditor, id int64) map[string]any {
	return e.next(func(m map[string]any) bool { return m["type"] == "reply" && m["id"] == float64(id) })
}

// TestKeysOutsideTheCacheNamespaces: a manager whose cache.Options limit namespaces (DefaultNamespaces, a ByObject
// entry's Namespaces) announces them per controller kind, and a key outside them is refused by step (force),
// reconcile now and dry-run with the reason — controller-runtime never queues such a key and the reconciler's Get
// through the cache fails, so the forced add used to start an endless backoff. Keys inside go through.
func TestKeysOutsideTheCacheNamespaces(t *testing.T) {
	e := newTestEditor(t, true)
	h := connectedHub(t, e)
	h.scope.Store(newCacheScope(cache.Options{Scheme: scheme.Scheme,
		DefaultNamespaces: map[string]cache.Config{"team-b": {}, "team-a": {}},
		ByObject:          map[client.Object]cache.ByObject{&corev1.Secret{}: {Namespaces: map[string]cache.Config{"vault": {}}, Label: labels.SelectorFromSet(labels.Set{"app": "lamp"})}},
	}))
	for _, c := range []struct{ name, kind string }{{"beacon", "ConfigMap"}, {"lamp", "Secret"}} {
		r := newReconciler(h, c.name, noopReconciler{})
		r.desc.Version, r.desc.Kind = "v1", c.kind
		q := newQueue(queueConfig{name: c.name, priorityQueue: true, hub: h})
		t.Cleanup(q.ShutDown)
	}
	got := map[string]any{}
	for range 2 {
		m := e.next(isType("controller"))
		got[m["name"].(string)] = []any{m["cacheNamespaces"], m["cacheLabelSelector"]}
	}
	if want := map[string]any{"beacon": []any{[]any{"team-a", "team-b"}, nil}, "lamp": []any{[]any{"vault"}, "app=lamp"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("announced cacheNamespaces and cacheLabelSelector %v, want %v", got, want)
	}

	id := int64(0)
	refused := func(c CommandMsg) {
		t.Helper()
		id++
		c.ID = id
		h.handle(c)
		m := replyTo(e, id)
		if msg, _ := m["error"].(string); m["ok"] == true || !strings.Contains(msg, "outside the cache of controller") || !strings.Contains(msg, c.Key) {
			t.Fatalf("%s %s: reply %v, want a refusal naming the key and the cache", c.Op, c.Key, m)
		}
	}
	refused(CommandMsg{Op: OpStep, Controller: "beacon", Key: "team-c/outside", Force: true})
	refused(CommandMsg{Op: OpReconcileNow, Controller: "beacon", Key: "team-c/outside"})
	refused(CommandMsg{Op: OpDryRun, Controller: "beacon", Key: "team-c/outside"})
	refused(CommandMsg{Op: OpReconcileNow, Controller: "lamp", Key: "team-a/s"})

	id++
	h.handle(CommandMsg{ID: id, Op: OpReconcileNow, Controller: "beacon", Key: "team-b/inside"})
	if m := replyTo(e, id); m["ok"] != true {
		t.Fatalf("reconcile now of a key inside the cache: %v", m)
	}
	id++
	h.handle(CommandMsg{ID: id, Op: OpReconcileNow, Controller: "lamp", Key: "vault/s"})
	if m := replyTo(e, id); m["ok"] != true {
		t.Fatalf("reconcile now of a Secret in its ByObject namespace: %v", m)
	}
}

func TestCacheScopeNamespaces(t *testing.T) {
	if got := newCacheScope(cache.Options{DefaultNamespaces: map[string]cache.Config{cache.AllNamespaces: {}, "a": {}}}).namespaces(corev1.SchemeGroupVersion.WithKind("ConfigMap")); got != nil {
		t.Fatalf("AllNamespaces: %v, want nil (every namespace)", got)
	}
	if got := newCacheScope(cache.Options{}).namespaces(corev1.SchemeGroupVersion.WithKind("ConfigMap")); got != nil {
		t.Fatalf("no namespaces set: %v, want nil", got)
	}
	s := newCacheScope(cache.Options{Scheme: scheme.Scheme, DefaultNamespaces: map[string]cache.Config{"a": {}},
		ByObject: map[client.Object]cache.ByObject{&corev1.Secret{}: {Namespaces: map[string]cache.Config{"v": {}}}}})
	if got := s.namespaces(corev1.SchemeGroupVersion.WithKind("ConfigMap")); !reflect.DeepEqual(got, []string{"a"}) {
		t.Fatalf("default namespaces: %v", got)
	}
	// The kind unknown (bridge.Wrap without its object): a ByObject entry could differ, so nothing is claimed.
	if got := s.namespaces(corev1.SchemeGroupVersion.WithKind("")); got != nil {
		t.Fatalf("unknown kind with ByObject namespaces: %v, want nil", got)
	}
	if why := outsideCache(ControllerMsg{Name: "c", CacheNamespaces: []string{"a"}}, reconcile.Request{}); why != "" {
		t.Fatalf("a cluster-scoped key is never outside: %q", why)
	}
	var nilScope *cacheScope
	if got := nilScope.namespaces(corev1.SchemeGroupVersion.WithKind("ConfigMap")); got != nil {
		t.Fatalf("no bridge cache: %v", got)
	}
}
