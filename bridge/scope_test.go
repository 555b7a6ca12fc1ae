package bridge

import (
	"context"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
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

// unknownKind is a type no scheme knows: a ByObject entry for it cannot be resolved to a kind.
type unknownKind struct{ corev1.ConfigMap }

// TestCacheScopeShapes: each shape of cache.Options announces what controller-runtime's defaulting makes of the
// controller's kind — per namespace (DefaultNamespaces / ByObject Namespaces with their own selectors, the ByObject
// entry's Label / Field, the DefaultNamespaces entry of the namespace, the Default* selectors), cache.AllNamespaces
// beside named namespaces, field selectors — and a shape it cannot tell announces "scope unknown" instead of a
// wrong scope.
func TestCacheScopeShapes(t *testing.T) {
	sel := func(s string) labels.Selector {
		l, err := labels.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	fsel := func(s string) fields.Selector { return fields.ParseSelectorOrDie(s) }
	cm := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	secret := corev1.SchemeGroupVersion.WithKind("Secret")
	for _, c := range []struct {
		name string
		opts cache.Options
		gvk  schema.GroupVersionKind
		want ControllerMsg
	}{
		{"nothing set", cache.Options{}, cm, ControllerMsg{}},
		{"DefaultLabelSelector and DefaultFieldSelector, every namespace",
			cache.Options{DefaultLabelSelector: sel("tier=fe"), DefaultFieldSelector: fsel("metadata.name!=skip")}, cm,
			ControllerMsg{CacheLabelSelector: "tier=fe", CacheFieldSelector: "metadata.name!=skip"}},
		{"DefaultNamespaces with a selector of their own, the default for the others",
			cache.Options{DefaultLabelSelector: sel("tier=fe"), DefaultNamespaces: map[string]cache.Config{"a": {LabelSelector: sel("app in (x,y)")}, "b": {}}}, cm,
			ControllerMsg{CacheNamespaces: []string{"a", "b"}, CacheLabelSelector: "tier=fe",
				CacheSelectors: []CacheSelector{{Namespace: "a", Label: "app in (x,y)"}, {Namespace: "b", Label: "tier=fe"}}}},
		{"cache.AllNamespaces beside a named namespace: every namespace, each with its config",
			cache.Options{DefaultNamespaces: map[string]cache.Config{cache.AllNamespaces: {LabelSelector: sel("team")}, "b": {}}}, cm,
			ControllerMsg{CacheSelectors: []CacheSelector{{Namespace: "", Label: "team"}, {Namespace: "b"}}}},
		{"ByObject Namespaces: the namespace's own selector, else the entry's Label / Field, else the DefaultNamespaces entry's, else the default",
			cache.Options{
				DefaultFieldSelector: fsel("metadata.name!=x"),
				DefaultNamespaces:    map[string]cache.Config{"v": {FieldSelector: fsel("metadata.name=n")}, "other": {}},
				ByObject: map[client.Object]cache.ByObject{&corev1.Secret{}: {
					Namespaces: map[string]cache.Config{"v": {}, "w": {LabelSelector: sel("x=y")}},
					Label:      sel("app=lamp"),
				}},
			}, secret,
			ControllerMsg{CacheNamespaces: []string{"v", "w"}, CacheLabelSelector: "app=lamp", CacheFieldSelector: "metadata.name!=x",
				CacheSelectors: []CacheSelector{{Namespace: "v", Label: "app=lamp", Field: "metadata.name=n"}, {Namespace: "w", Label: "x=y", Field: "metadata.name!=x"}}}},
		{"ByObject without Namespaces takes DefaultNamespaces, with its Label",
			cache.Options{DefaultNamespaces: map[string]cache.Config{"a": {}}, ByObject: map[client.Object]cache.ByObject{&corev1.Secret{}: {Label: sel("app=lamp"), Field: fsel("type=Opaque")}}}, secret,
			ControllerMsg{CacheNamespaces: []string{"a"}, CacheLabelSelector: "app=lamp", CacheFieldSelector: "type=Opaque",
				CacheSelectors: []CacheSelector{{Namespace: "a", Label: "app=lamp", Field: "type=Opaque"}}}},
		{"another kind's ByObject entry changes nothing for this kind",
			cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Secret{}: {Label: sel("app=lamp")}}}, cm, ControllerMsg{}},
		{"a ByObject entry whose kind the scheme does not know: scope unknown",
			cache.Options{DefaultNamespaces: map[string]cache.Config{"a": {}}, ByObject: map[client.Object]cache.ByObject{&unknownKind{}: {Label: sel("app=lamp")}}}, cm,
			ControllerMsg{CacheScopeUnknown: "unknownKind"}},
		{"the controller's kind not known while ByObject has entries: scope unknown",
			cache.Options{DefaultNamespaces: map[string]cache.Config{"a": {}}, ByObject: map[client.Object]cache.ByObject{&corev1.Secret{}: {}}}, schema.GroupVersionKind{},
			ControllerMsg{CacheScopeUnknown: "kind is not known"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got ControllerMsg
			newCacheScope(c.opts).announce(&got, c.gvk)
			if c.want.CacheScopeUnknown != "" {
				if !strings.Contains(got.CacheScopeUnknown, c.want.CacheScopeUnknown) || got.CacheNamespaces != nil || got.CacheSelectors != nil || got.CacheLabelSelector != "" || got.CacheFieldSelector != "" {
					t.Fatalf("got %+v, want scope unknown (%q) and nothing else", got, c.want.CacheScopeUnknown)
				}
				if why := outsideCache(got, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "elsewhere", Name: "x"}}); why != "" {
					t.Fatalf("scope unknown refuses nothing, refused: %s", why)
				}
				return
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("announced\n %+v\nwant\n %+v", got, c.want)
			}
		})
	}
}

// TestOutsideCacheFieldSelector: a field selector on metadata.name / metadata.namespace leaves keys out by the key
// alone, so the bridge refuses them itself (in the editor's words); one on another field, or a scope it cannot
// tell, refuses nothing.
func TestOutsideCacheFieldSelector(t *testing.T) {
	key := func(ns, name string) reconcile.Request {
		return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
	}
	perNs := ControllerMsg{Name: "lamp", Kind: "Secret", CacheNamespaces: []string{"a", "b"},
		CacheSelectors: []CacheSelector{{Namespace: "a", Field: "metadata.name!=skip"}, {Namespace: "b", Field: "type=Opaque"}}}
	want := `key a/skip is outside the cache of controller "lamp": its manager's cache (cache.Options) lists Secret objects in namespace a only with field selector metadata.name!=skip, which it does not match, so controller-runtime never queues it and its reconciler's Get through the cache finds nothing`
	if got := outsideCache(perNs, key("a", "skip")); got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if got := outsideCache(perNs, key("a", "keep")); got != "" {
		t.Fatalf("a matching key refused: %s", got)
	}
	if got := outsideCache(perNs, key("b", "skip")); got != "" {
		t.Fatalf("a selector on another field (type) is not known from the key, refused: %s", got)
	}
	all := ControllerMsg{Name: "c", CacheSelectors: []CacheSelector{{Namespace: "", Field: "metadata.namespace!=kube-system"}, {Namespace: "x"}}}
	if got := outsideCache(all, key("kube-system", "n")); !strings.Contains(got, "field selector metadata.namespace!=kube-system") {
		t.Fatalf("cache.AllNamespaces' field selector: %q", got)
	}
	if got := outsideCache(all, key("x", "n")); got != "" {
		t.Fatalf("x has its own config: %q", got)
	}
	wide := ControllerMsg{Name: "c", CacheFieldSelector: "metadata.name=only"}
	if got := outsideCache(wide, key("", "other")); !strings.Contains(got, "only with field selector metadata.name=only") {
		t.Fatalf("kind-wide field selector on a cluster-scoped key: %q", got)
	}
	wide.CacheScopeUnknown = "why"
	if got := outsideCache(wide, key("", "other")); got != "" {
		t.Fatalf("scope unknown refuses nothing: %q", got)
	}
}
