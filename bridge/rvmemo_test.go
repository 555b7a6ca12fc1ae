package bridge

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// olderRV fails the test unless a < b as the server orders resourceVersions.
func olderRV(t *testing.T, a, b string) {
	t.Helper()
	if c, err := resourceversion.CompareResourceVersion(a, b); err != nil || c >= 0 {
		t.Fatalf("resourceVersion %q is not older than %q (%d, %v)", a, b, c, err)
	}
}

// TestJournalApplyAgainIsJournaledUnchanged: a server-side apply carries no resourceVersion, so every live apply was
// journaled "rv — → N" and one that changed nothing could not be told from one that did. Now its before is the
// resourceVersion the server answered to the bridge's previous write of the object: the same intent applied again
// reads before == after; a changed intent reads before = the version the object had, after newer.
func TestJournalApplyAgainIsJournaledUnchanged(t *testing.T) {
	real, ns, e, c, ctx := journalingClient(t)
	owner := client.FieldOwner("bridge-test")
	apply := func(message string) Write {
		t.Helper()
		if err := c.Apply(ctx, corev1ac.ConfigMap("intent", ns).WithData(map[string]string{"message": message}), client.ForceOwnership, owner); err != nil {
			t.Fatal(err)
		}
		return nextWrite(t, e)
	}
	first := apply("one")
	if first.Verb != "apply" || first.ResourceVersionAfter == "" || first.ResourceVersionBefore != "" {
		t.Fatalf("the apply that created the object journaled as %+v, want no before (there was no object)", first)
	}
	again := apply("one")
	if again.ResourceVersionBefore != first.ResourceVersionAfter || again.ResourceVersionAfter != first.ResourceVersionAfter {
		t.Fatalf("the same intent applied again journaled rv %q → %q, want %s → %s (the server stored nothing)",
			again.ResourceVersionBefore, again.ResourceVersionAfter, first.ResourceVersionAfter, first.ResourceVersionAfter)
	}
	var had corev1.ConfigMap
	if err := real.Get(ctx, client.ObjectKey{Namespace: ns, Name: "intent"}, &had); err != nil {
		t.Fatal(err)
	}
	changed := apply("two")
	if changed.ResourceVersionBefore != had.ResourceVersion {
		t.Fatalf("a changed intent journaled with before %q, want the version the object had, %s", changed.ResourceVersionBefore, had.ResourceVersion)
	}
	olderRV(t, changed.ResourceVersionBefore, changed.ResourceVersionAfter)
}

// TestJournalStaleStatusPatchThatChangesNothing: a status merge patch built on an object one write stale (as a
// controller reading its cache right after its own write does) carries the stale resourceVersion; when the server
// already holds what it sets, it stores nothing and answers with the version of the previous write, which was
// journaled "rv stale → previous" and read as a change. Now the before is the newest version the bridge knows (its
// previous write's): before == after. A stale patch that does change the status reads before = the version the
// object had, after newer.
func TestJournalStaleStatusPatchThatChangesNothing(t *testing.T) {
	real, ns, e, c, ctx := journalingClient(t)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "front", Namespace: ns},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	if err := real.Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	stale := svc.DeepCopy() // the cache's copy, which the next patches start from
	condition := func(typ string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: "Tested", Message: "set by the test",
			LastTransitionTime: metav1.NewTime(time.Unix(1700000000, 0))}
	}
	patchStatus := func(conditions ...metav1.Condition) Write {
		t.Helper()
		obj := stale.DeepCopy()
		obj.Status.Conditions = conditions
		if err := c.Status().Patch(ctx, obj, client.MergeFrom(stale)); err != nil {
			t.Fatal(err)
		}
		return nextWrite(t, e)
	}
	first := patchStatus(condition("Ready"))
	if first.ResourceVersionBefore != stale.ResourceVersion || first.ResourceVersionAfter == stale.ResourceVersion {
		t.Fatalf("the first status patch journaled as %+v, want rv %s → a newer one", first, stale.ResourceVersion)
	}
	same := patchStatus(condition("Ready"))
	if same.ResourceVersionAfter != first.ResourceVersionAfter {
		t.Fatalf("the server stored the repeated status patch (rv %s → %s): this test needs a patch that changes nothing", first.ResourceVersionAfter, same.ResourceVersionAfter)
	}
	if same.ResourceVersionBefore != same.ResourceVersionAfter {
		t.Fatalf("a stale status patch that changed nothing journaled rv %q → %q, want before == after (%s)", same.ResourceVersionBefore, same.ResourceVersionAfter, first.ResourceVersionAfter)
	}
	var had corev1.Service
	if err := real.Get(ctx, client.ObjectKeyFromObject(svc), &had); err != nil {
		t.Fatal(err)
	}
	changed := patchStatus(condition("Ready"), condition("Serving"))
	if changed.ResourceVersionBefore != had.ResourceVersion {
		t.Fatalf("a stale status patch that changed the status journaled with before %q, want the version the object had, %s", changed.ResourceVersionBefore, had.ResourceVersion)
	}
	olderRV(t, changed.ResourceVersionBefore, changed.ResourceVersionAfter)

	// A patch the server refuses (409: it carries the stale resourceVersion as a precondition) is journaled with the
	// version it carried, the one the conflict is about.
	obj := stale.DeepCopy()
	obj.Status.Conditions = []metav1.Condition{condition("Stale")}
	err := c.Status().Patch(ctx, obj, client.MergeFromWithOptions(stale, client.MergeFromWithOptimisticLock{}))
	if !apierrors.IsConflict(err) {
		t.Fatalf("a patch carrying a stale resourceVersion: %v, want a 409 Conflict", err)
	}
	if w := nextWrite(t, e); w.Error == "" || w.ResourceVersionBefore != stale.ResourceVersion {
		t.Fatalf("the refused patch journaled as %+v, want its error and the version it carried, %s", w, stale.ResourceVersion)
	}
}

// TestJournalBeforeFromTheProgramsCache: for an object the bridge never wrote, a live write's before is the
// resourceVersion the program's own cache holds (an informer its watch started): a merge patch sent on an object
// without a resourceVersion that changes nothing reads before == after (it read "rv — → N"). For an object it wrote
// that another writer changed since, the informer's event of that change makes the newer version the before.
func TestJournalBeforeFromTheProgramsCache(t *testing.T) {
	s := onAPIServer(t, false)
	rec := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil })
	s.configMapController(t, controller.Options{}, rec)
	startManager(t, s.mgr)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	owner := client.FieldOwner("bridge-test")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "written-elsewhere"}, Data: map[string]string{"a": "1"}}
	if err := s.plain.Create(ctx, cm, owner); err != nil {
		t.Fatal(err)
	}
	key := s.ns + "/" + cm.Name
	s.e.next(func(m map[string]any) bool { return m["type"] == "queue" && m["key"] == key }) // in the cache now

	patch := client.RawPatch(types.MergePatchType, []byte(`{"data":{"a":"1"}}`))
	target := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: cm.Name}}
	if err := s.mgr.GetClient().Patch(ctx, target, patch, owner); err != nil {
		t.Fatal(err)
	}
	w := nextWrite(t, s.e)
	if w.ResourceVersionAfter != cm.ResourceVersion {
		t.Fatalf("the server stored the patch (rv %s → %s): this test needs one that changes nothing", cm.ResourceVersion, w.ResourceVersionAfter)
	}
	if w.ResourceVersionBefore != cm.ResourceVersion {
		t.Fatalf("a patch that changed nothing journaled rv %q → %q, want the cache's %s → %s", w.ResourceVersionBefore, w.ResourceVersionAfter, cm.ResourceVersion, cm.ResourceVersion)
	}

	// The bridge writes it, another writer changes it, the program's informer sees that change.
	if err := s.mgr.GetClient().Patch(ctx, target, client.RawPatch(types.MergePatchType, []byte(`{"data":{"a":"2"}}`)), owner); err != nil {
		t.Fatal(err)
	}
	if w := nextWrite(t, s.e); w.ResourceVersionAfter == w.ResourceVersionBefore {
		t.Fatalf("the bridge's change journaled as %+v", w)
	}
	if err := s.plain.Get(ctx, client.ObjectKeyFromObject(cm), cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["a"] = "3"
	if err := s.plain.Update(ctx, cm, owner); err != nil {
		t.Fatal(err)
	}
	s.e.next(func(m map[string]any) bool { // the informer's event of the other writer's change queued the key
		causes, _ := m["causes"].([]any)
		for _, c := range causes {
			if c, _ := c.(map[string]any); c["objectKey"] == key && c["resourceVersion"] == cm.ResourceVersion {
				return m["type"] == "queue" && m["key"] == key
			}
		}
		return false
	})
	if err := s.mgr.GetClient().Patch(ctx, target, client.RawPatch(types.MergePatchType, []byte(`{"data":{"a":"3"}}`)), owner); err != nil {
		t.Fatal(err)
	}
	w = nextWrite(t, s.e)
	if w.ResourceVersionAfter != cm.ResourceVersion {
		t.Fatalf("the server stored the patch (rv %s → %s): this test needs one that changes nothing", cm.ResourceVersion, w.ResourceVersionAfter)
	}
	if w.ResourceVersionBefore != cm.ResourceVersion {
		t.Fatalf("a patch that changed nothing after another writer's change journaled rv %q → %q, want %s → %s", w.ResourceVersionBefore, w.ResourceVersionAfter, cm.ResourceVersion, cm.ResourceVersion)
	}
}

// spyCache is a cache whose informers are fakes that say whether they synced; it counts every Get and GetInformer
// (either would start an informer in a real cache) and answers Get with a ConfigMap at rv.
type spyCache struct {
	cache.Cache
	synced        bool
	rv            string
	gets, getInfs int
	lastOpts      client.GetOptions
}

type spyInformer struct {
	cache.Informer
	synced bool
}

func (i spyInformer) HasSynced() bool { return i.synced }

func (s *spyCache) GetInformer(context.Context, client.Object, ...cache.InformerGetOption) (cache.Informer, error) {
	s.getInfs++
	return spyInformer{synced: s.synced}, nil
}

func (s *spyCache) RemoveInformer(context.Context, client.Object) error { return nil }

func (s *spyCache) Get(_ context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	s.gets++
	s.lastOpts.ApplyOptions(opts)
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return fmt.Errorf("spy: asked for %T", obj)
	}
	cm.Name, cm.Namespace, cm.ResourceVersion = key.Name, key.Namespace, s.rv
	return nil
}

// TestCachedRVReadsOnlyInformersTheProgramStarted: the cache is read for a write's before only through an informer
// a watch of the program was handed and only once it synced (a Get on any other kind, or on an informer still
// syncing, would start an informer or wait for one); without the deep copy; and not after the program removed the
// informer.
func TestCachedRVReadsOnlyInformersTheProgramStarted(t *testing.T) {
	spy := &spyCache{rv: "42"}
	h := newHub("", "", nil)
	c := newCache(h, spy, cache.Options{Scheme: scheme.Scheme})
	cmKind := schema.GroupKind{Kind: "ConfigMap"}
	key := client.ObjectKey{Namespace: "shop", Name: "cart"}
	if rv := c.cachedRV(cmKind, key); rv != "" || spy.gets != 0 {
		t.Fatalf("no informer handed out: rv %q after %d Get(s), want none", rv, spy.gets)
	}
	if _, err := c.GetInformer(context.Background(), &corev1.ConfigMap{}); err != nil {
		t.Fatal(err)
	}
	if rv := c.cachedRV(cmKind, key); rv != "" || spy.gets != 0 {
		t.Fatalf("informer not synced: rv %q after %d Get(s), want none", rv, spy.gets)
	}
	spy.synced = true
	c.handed[0].Informer = spyInformer{synced: true}
	if rv := c.cachedRV(schema.GroupKind{Kind: "Secret"}, key); rv != "" || spy.gets != 0 {
		t.Fatalf("a kind without an informer: rv %q after %d Get(s), want none", rv, spy.gets)
	}
	if rv := c.cachedRV(cmKind, key); rv != "42" || spy.gets != 1 || spy.lastOpts.UnsafeDisableDeepCopy == nil || !*spy.lastOpts.UnsafeDisableDeepCopy {
		t.Fatalf("synced informer: rv %q after %d Get(s) with %+v, want 42 after one Get without a deep copy", rv, spy.gets, spy.lastOpts)
	}
	if err := c.RemoveInformer(context.Background(), &corev1.ConfigMap{}); err != nil {
		t.Fatal(err)
	}
	if rv := c.cachedRV(cmKind, key); rv != "" || spy.gets != 1 || spy.getInfs != 1 {
		t.Fatalf("after RemoveInformer: rv %q after %d Get(s) and %d GetInformer(s), want no more", rv, spy.gets, spy.getInfs)
	}
}

// TestRVMemo: the memo keeps the newest resourceVersion of each object (an older answer arriving later does not
// replace it; an incomparable one, the later observation, does), forgets a deleted object, takes an informer event's
// version only for an object it holds and only when newer, and stays bounded.
func TestRVMemo(t *testing.T) {
	var m rvMemo
	a := objectRef{"", "ConfigMap", "ns", "a"}
	m.note(a, "100")
	m.note(a, "99")
	if got := m.get(a); got != "100" {
		t.Fatalf("an older answer replaced a newer one: %q", got)
	}
	m.note(a, "101")
	if got := m.get(a); got != "101" {
		t.Fatalf("a newer answer was not kept: %q", got)
	}
	m.note(a, "opaque-7")
	if got := m.get(a); got != "opaque-7" {
		t.Fatalf("an incomparable answer (the later observation) was not kept: %q", got)
	}
	m.forget(a)
	if got := m.get(a); got != "" {
		t.Fatalf("a forgotten object still has %q", got)
	}
	m.seen(a, "200")
	if got := m.get(a); got != "" {
		t.Fatalf("an informer event added an object the bridge never wrote: %q", got)
	}
	m.note(a, "300")
	for _, rv := range []string{"299", "opaque-8", ""} {
		if m.seen(a, rv); m.get(a) != "300" {
			t.Fatalf("an event at %q (older, or not comparable) replaced 300: %q", rv, m.get(a))
		}
	}
	if m.seen(a, "301"); m.get(a) != "301" {
		t.Fatalf("an event at a newer version was not kept: %q", m.get(a))
	}
	for i := range 3 * rvMemoGeneration {
		m.note(objectRef{"", "ConfigMap", "ns", fmt.Sprint(i)}, "5")
	}
	if n := len(m.cur) + len(m.prev); n > 2*rvMemoGeneration {
		t.Fatalf("the memo holds %d objects, want at most %d", n, 2*rvMemoGeneration)
	}
	if got := m.get(objectRef{"", "ConfigMap", "ns", fmt.Sprint(3*rvMemoGeneration - 1)}); got != "5" {
		t.Fatalf("the latest noted object is not kept: %q", got)
	}
	for _, c := range []struct{ a, b, want string }{
		{"", "7", "7"}, {"7", "", "7"}, {"9", "10", "10"}, {"10", "9", "10"}, {"mine", "10", "mine"}, {"10", "x", "10"},
	} {
		if got := newerRV(c.a, c.b); got != c.want {
			t.Fatalf("newerRV(%q, %q) = %q, want %q", c.a, c.b, got, c.want)
		}
	}
}
