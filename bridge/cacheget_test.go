package bridge

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestCacheGetReadsTheProgramsCache: the editor is told which resources the program caches; cacheGet answers with the program's own cached copy (typed informer, TypeMeta
// filled in, the resourceVersion the informer saw), no object for a key the cache does not hold, and a clear error
// for a resource none of the program's watches asked for (no informer is started for it) and for a key outside the
// cache's namespaces.
func TestCacheGetReadsTheProgramsCache(t *testing.T) {
	s := onAPIServer(t, false)
	plain, ns, e, h, mgr := s.plain, s.ns, s.e, s.h, s.mgr
	rec := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil })
	s.configMapController(t, controller.Options{}, rec)
	startManager(t, mgr)
	// The editor learns what the program caches (it watches those resources too).
	inf := e.next(func(m map[string]any) bool { return m["type"] == "informers" })
	if got, _ := inf["resources"].([]any); len(got) != 1 || got[0] != "configmaps.v1" {
		t.Fatalf("informers message %v, want [configmaps.v1]", inf)
	}
	// A reconnecting editor is told again (the announcements sent after its welcome).
	var again *InformersMsg
	for _, m := range h.announcements() {
		if im, ok := m.(*InformersMsg); ok {
			again = im
		}
	}
	if again == nil || len(again.Resources) != 1 || again.Resources[0] != "configmaps.v1" {
		t.Fatalf("announcements after a reconnect carry %v, want the informers [configmaps.v1]", again)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kettle"}, Data: map[string]string{"water": "cold"}}
	if err := plain.Create(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	key := ns + "/kettle"
	e.next(func(m map[string]any) bool { return m["type"] == "queue" && m["key"] == key })

	id := int64(0)
	get := func(resource, key string) map[string]any {
		id++
		return commandAndWait(t, e, h, CommandMsg{ID: id, Op: OpCacheGet, Resource: resource, Key: key})
	}
	r := get("configmaps.v1", key)
	obj, _ := r["object"].(map[string]any)
	if r["ok"] != true || obj == nil {
		t.Fatalf("cacheGet of a cached ConfigMap: %v", r)
	}
	meta, _ := obj["metadata"].(map[string]any)
	data, _ := obj["data"].(map[string]any)
	if obj["apiVersion"] != "v1" || obj["kind"] != "ConfigMap" || meta["name"] != "kettle" || meta["resourceVersion"] != cm.ResourceVersion || data["water"] != "cold" {
		t.Fatalf("cached object %v, want the ConfigMap at rv %s", obj, cm.ResourceVersion)
	}

	if r := get("configmaps.v1", ns+"/no-such-kettle"); r["ok"] != true || r["object"] != nil {
		t.Fatalf("cacheGet of a key the cache does not hold: %v, want ok without object", r)
	}
	r = get("secrets.v1", ns+"/anything")
	if msg, _ := r["error"].(string); r["ok"] == true || !strings.Contains(msg, "no informer for secrets.v1") || !strings.Contains(msg, "it caches configmaps.v1") {
		t.Fatalf("cacheGet of a resource nothing watches: %v", r)
	}
	bc := h.cache.Load()
	bc.mu.Lock()
	n := len(bc.handed)
	bc.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d informers handed out after cacheGet of an unwatched resource, want the ConfigMaps' only", n)
	}
	r = get("configmaps.v1", "kube-system/kube-root-ca.crt")
	if msg, _ := r["error"].(string); r["ok"] == true || !strings.Contains(msg, "outside the program's cache") || !strings.Contains(msg, ns) {
		t.Fatalf("cacheGet outside the cache's namespaces: %v", r)
	}

	// The cache follows the server: after an update the cached copy has the new resourceVersion.
	cm.Data["water"] = "hot"
	if err := plain.Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	e.next(func(m map[string]any) bool {
		return m["type"] == "queue" && m["key"] == key && m["transition"] == "added"
	})
	var cached corev1.ConfigMap
	if err := mgr.GetCache().Get(context.Background(), client.ObjectKeyFromObject(cm), &cached); err != nil || cached.ResourceVersion != cm.ResourceVersion {
		t.Fatalf("the manager's cache has rv %s (%v), want %s", cached.ResourceVersion, err, cm.ResourceVersion)
	}
	obj, _ = get("configmaps.v1", key)["object"].(map[string]any)
	meta, _ = obj["metadata"].(map[string]any)
	if meta["resourceVersion"] != cm.ResourceVersion {
		t.Fatalf("cacheGet after the update: rv %v, want %s", meta["resourceVersion"], cm.ResourceVersion)
	}
}

// TestCacheGetBeforeAnyInformer: before any watch started an informer (its controller waits for leader election or its
// caches, e.g. a list the server refuses), cacheGet says so instead of "none of its watches asked for it (it caches )".
func TestCacheGetBeforeAnyInformer(t *testing.T) {
	_, _, err := (&bridgeCache{}).cachedObject("widgets.v1alpha1.lab.reconcile.dev", "shop/w")
	if err == nil || !strings.Contains(err.Error(), "no informer for widgets.v1alpha1.lab.reconcile.dev yet: no watch of the program has started one") || strings.Contains(err.Error(), "it caches") {
		t.Fatalf("cacheGet before any informer: %v", err)
	}
}
