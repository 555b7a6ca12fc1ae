package bridge

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta/testrestmapper"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestGateLetsExactlyIWritesThroughThenHolds(t *testing.T) {
	s := newCheckState(checkConfig{holdAfterWrites: 2})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	ok := func() error { calls++; return nil }
	if err := s.gate(ctx, func() error { calls++; return errors.New("conflict") }); err == nil {
		t.Fatal("a failed write must return its error")
	}
	for i := 0; i < 2; i++ {
		if err := s.gate(ctx, ok); err != nil {
			t.Fatalf("write %d: %v", i+1, err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- s.gate(ctx, ok) }()
	select {
	case err := <-done:
		t.Fatalf("write 3 passed the gate after 2 successful writes: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("held write: %v", err)
	}
	if calls != 3 {
		t.Fatalf("the held write reached the server (calls %d, want 3: one failed, two ok)", calls)
	}
	var nilState *checkState
	if err := nilState.gate(ctx, func() error { return nil }); err != nil {
		t.Fatal("no check state: writes pass")
	}
}

type recordingHandler struct{ updates [][2]string }

func (h *recordingHandler) OnAdd(any, bool) {}
func (h *recordingHandler) OnUpdate(o, n any) {
	h.updates = append(h.updates, [2]string{o.(*corev1.ConfigMap).ResourceVersion, n.(*corev1.ConfigMap).ResourceVersion})
}
func (h *recordingHandler) OnDelete(any) {}

var _ toolscache.ResourceEventHandler = (*recordingHandler)(nil)

func TestWithholdAndReleaseDeliverOneCoalescedUpdate(t *testing.T) {
	h := newHub("", "", nil)
	h.check = newCheckState(checkConfig{namespace: "ns"})
	inf := &bridgeInformer{c: &bridgeCache{h: h}}
	inf.once.Do(func() { inf.resource = "configmaps.v1" })
	rec := &recordingHandler{}
	a := &attributing{inner: rec, i: inf}
	cm := func(name, rv string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
	}
	h.check.withhold("configmaps.v1", "ns/a")
	a.OnUpdate(cm("a", "1"), cm("a", "2"))
	a.OnUpdate(cm("a", "2"), cm("a", "3"))
	a.OnUpdate(cm("b", "1"), cm("b", "2")) // another key passes
	if len(rec.updates) != 1 || rec.updates[0] != [2]string{"1", "2"} {
		t.Fatalf("while withholding: %v", rec.updates)
	}
	if n := h.check.release("configmaps.v1", "ns/a"); n != 2 {
		t.Fatalf("withheld %d, want 2", n)
	}
	if len(rec.updates) != 2 || rec.updates[1] != [2]string{"1", "3"} {
		t.Fatalf("release delivers one update from the first old to the latest: %v", rec.updates)
	}
	a.OnUpdate(cm("a", "3"), cm("a", "4"))
	if len(rec.updates) != 3 {
		t.Fatal("after release updates pass again")
	}
	if n := h.check.release("configmaps.v1", "ns/a"); n != 0 {
		t.Fatalf("second release: %d", n)
	}
}

type recordingTransport struct{ got []*url.URL }

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r.got = append(r.got, req.URL)
	return &http.Response{StatusCode: 200, Body: http.NoBody, Request: req}, nil
}

func TestFreezingTransportListsAtTheFrozenRVAndHoldsWatchesUntilThaw(t *testing.T) {
	s := newCheckState(checkConfig{freezeAt: "42"})
	inner := &recordingTransport{}
	ft := &freezingTransport{inner: inner, s: s}
	get := func(ctx context.Context, raw string) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
		return ft.RoundTrip(req)
	}
	if _, err := get(context.Background(), "https://x/api/v1/namespaces/ns/configmaps?limit=500&resourceVersion=0"); err != nil {
		t.Fatal(err)
	}
	if q := inner.got[0].Query(); q.Get("resourceVersion") != "42" || q.Get("resourceVersionMatch") != "Exact" || q.Get("limit") != "500" {
		t.Fatalf("list: %v", inner.got[0])
	}
	if _, err := get(context.Background(), "https://x/api/v1/configmaps?watch=true&sendInitialEvents=true"); !errors.Is(err, errFrozenWatchList) {
		t.Fatalf("a streaming list while frozen: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := get(context.Background(), "https://x/api/v1/configmaps?watch=true&resourceVersion=42")
		done <- err
	}()
	select {
	case <-done:
		t.Fatal("a watch ran while frozen")
	case <-time.After(100 * time.Millisecond):
	}
	if !s.thaw() {
		t.Fatal("thaw of a frozen cache")
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := get(context.Background(), "https://x/api/v1/configmaps?resourceVersion=7"); err != nil || inner.got[len(inner.got)-1].Query().Get("resourceVersion") != "7" {
		t.Fatal("after thaw lists pass unchanged")
	}
	if newCheckState(checkConfig{}).thaw() {
		t.Fatal("thaw of a cache that was never frozen reports false")
	}
}

// TestOptionsNameMismatch: a name given to bridge.Options that is not the controller's (a plural, a typo, the kind
// with its capital) is named in a warning with the name to use; the right name (or none) is silent.
func TestOptionsNameMismatch(t *testing.T) {
	if w := nameMismatch("deployment", "deployment"); w != "" {
		t.Fatalf("matching names warned: %s", w)
	}
	if w := nameMismatch("", "deployment"); w != "" {
		t.Fatalf("no given name warned: %s", w)
	}
	w := nameMismatch("deployments", "deployment")
	for _, want := range []string{`bridge.Options(mgr, "deployments", …)`, `controller-runtime named "deployment"`, `pass "deployment" to bridge.Options and bridge.Wrap`} {
		if !strings.Contains(w, want) {
			t.Fatalf("warning %q lacks %q", w, want)
		}
	}
}

// TestCauseOfAChildNamedLikeItsOwner: a kubebuilder controller often names its children like the object it
// reconciles (Deployment "web" owns Secret "web"). An event of that child is "owned", not "the object itself";
// the controller's own object is still "informer"; with the For resource unknown the name decides as before.
func TestCauseOfAChildNamedLikeItsOwner(t *testing.T) {
	key := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "shop", Name: "web"}}
	secret := &informerEvent{event: "update", resource: "secrets.v1", namespace: "shop", name: "web", owners: []ownerRef{{group: "apps", kind: "Deployment", name: "web", controller: true}}}
	deployments := forType{resource: "deployments.apps", group: "apps", kind: "Deployment"}
	deploy := &informerEvent{event: "update", resource: "deployments.v1.apps", namespace: "shop", name: "web"}
	if c := causeFor(secret, priorityqueue.AddOpts{}, key, 1, deployments); c.Kind != CauseOwned {
		t.Fatalf("the owned Secret named like its Deployment: %q, want owned", c.Kind)
	}
	if c := causeFor(deploy, priorityqueue.AddOpts{}, key, 1, deployments); c.Kind != CauseInformer {
		t.Fatalf("the Deployment itself: %q, want informer", c.Kind)
	}
	cm := &informerEvent{event: "add", resource: "configmaps.v1", namespace: "shop", name: "web"}
	if c := causeFor(cm, priorityqueue.AddOpts{}, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "shop", Name: "web"}}, 1, forType{resource: "configmaps", kind: "ConfigMap"}); c.Kind != CauseInformer {
		t.Fatalf("a core-group For resource: %q, want informer", c.Kind)
	}
	if c := causeFor(secret, priorityqueue.AddOpts{}, key, 1, forType{}); c.Kind != CauseInformer {
		t.Fatalf("For resource unknown: %q, want informer (by name, as before)", c.Kind)
	}
	if got := forTypeOf(ControllerMsg{Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments"}); got != deployments {
		t.Fatalf("forTypeOf = %+v", got)
	}
	if got := forTypeOf(ControllerMsg{Version: "v1", Kind: "ConfigMap", Resource: "configmaps"}); got != (forType{resource: "configmaps", kind: "ConfigMap"}) {
		t.Fatalf("forTypeOf of a core kind = %+v", got)
	}
}

// TestOwnedOnlyByTheForKind: an object whose owner reference names the key's name but another kind (a ConfigMap
// owned by a Job "web", reaching a Deployment controller through a mapped watch) is queued by that watch, not
// "owned"; an owner of the For kind in another group is not the For kind either. The owner's group comes from
// its apiVersion (the core group's "v1" has none).
func TestOwnedOnlyByTheForKind(t *testing.T) {
	key := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "shop", Name: "web"}}
	deployments := forType{resource: "deployments.apps", group: "apps", kind: "Deployment"}
	for _, tc := range []struct {
		name       string
		apiVersion string
		kind       string
		want       string
	}{
		{"owned by the Deployment", "apps/v1", "Deployment", CauseOwned},
		{"owned by a Job of the same name", "batch/v1", "Job", CauseWatch},
		{"owned by another group's Deployment", "example.com/v1", "Deployment", CauseWatch},
	} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-settings", ResourceVersion: "3",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: tc.apiVersion, Kind: tc.kind, Name: "web", UID: "u1"}}}}
		ev := eventFor("update", "configmaps.v1", "ConfigMap", cm, false, time.Unix(1764588000, 0))
		if c := causeFor(ev, priorityqueue.AddOpts{}, key, 1, deployments); c.Kind != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, c.Kind, tc.want)
		}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "p", OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "web"}}}}
	ev := eventFor("update", "pods.v1", "Pod", pod, false, time.Unix(1764588000, 0))
	if c := causeFor(ev, priorityqueue.AddOpts{}, key, 1, forType{resource: "configmaps", kind: "ConfigMap"}); c.Kind != CauseOwned {
		t.Errorf("owned by a core-group For kind: %q, want owned", c.Kind)
	}
}

// TestCheckInstanceWritesOnlyInItsScratchNamespace: a check instance runs over copies in its scratch namespace; a
// persisted write anywhere else (a Runnable's write to a fixed namespace, a DeleteAllOf across namespaces) is
// refused with a clear error, journaled, and never reaches the server; writes in the scratch namespace and dry-run
// writes pass. Before, the check instances of a program whose Runnable wrote to a fixed namespace changed the
// developer's real objects on every run.
func TestCheckInstanceWritesOnlyInItsScratchNamespace(t *testing.T) {
	real := realClient(t)
	ns, other := scratchNamespace(t, real), scratchNamespace(t, real)
	e, h := checkInstanceHub(t, ns)
	j := newClient(h, real)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	if err := j.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "inside", Namespace: ns}}); err != nil {
		t.Fatalf("a write in the scratch namespace: %v", err)
	}
	if w := nextWrite(t, e); w.Error != "" || w.Namespace != ns {
		t.Fatalf("inside write journaled as %+v", w)
	}
	err := j.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "heartbeat", Namespace: other}})
	if err == nil || !strings.Contains(err.Error(), "refused create configmaps "+other+"/heartbeat") || !strings.Contains(err.Error(), "scratch namespace "+ns) {
		t.Fatalf("a write outside the scratch namespace: %v", err)
	}
	if w := nextWrite(t, e); !strings.Contains(w.Error, "refused") || w.Namespace != other {
		t.Fatalf("the refused write is journaled with its error: %+v", w)
	}
	var cm corev1.ConfigMap
	if err := real.Get(ctx, types.NamespacedName{Namespace: other, Name: "heartbeat"}, &cm); err == nil {
		t.Fatal("the refused write reached the server")
	}
	if err := j.DeleteAllOf(ctx, &corev1.ConfigMap{}); err == nil || !strings.Contains(err.Error(), "(all namespaces)") {
		t.Fatalf("a DeleteAllOf across namespaces: %v", err)
	}
	_ = nextWrite(t, e)
	dctx := withReconcileInfo(ctx, &reconcileInfo{controller: "c", key: ns + "/x", id: "dryrun-1", dryRun: true})
	if err := j.Create(dctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "planned", Namespace: other}}); err != nil {
		t.Fatalf("a dry-run write persists nothing and is not refused: %v", err)
	}
	if err := real.Get(ctx, types.NamespacedName{Namespace: ns, Name: "inside"}, &cm); err != nil {
		t.Fatalf("the inside write: %v", err)
	}
}

// TestCheckInstanceGuardUsesTheNamespaceTheClientWritesTo: the scratch-namespace guard looks at where
// controller-runtime's client really writes, not at the namespace an object names. A DeleteAllOf without
// InNamespace deletes in every namespace even when its object names the scratch namespace (the client ignores it),
// and a cluster-scoped object naming the scratch namespace is written cluster-wide: both are refused and never
// reach the server; a DeleteAllOf InNamespace(scratch) and a write in it pass. (No control plane: a fake client
// whose RESTMapper knows which kinds are cluster-scoped.)
func TestCheckInstanceGuardUsesTheNamespaceTheClientWritesTo(t *testing.T) {
	const ns = "rl-check-scratch"
	reached := map[string]int{}
	inner := interceptor.NewClient(fake.NewClientBuilder().WithRESTMapper(testrestmapper.TestOnlyStaticRESTMapper(scheme.Scheme)).Build(), interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			reached["create "+obj.GetName()]++
			return c.Create(ctx, obj, opts...)
		},
		DeleteAllOf: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteAllOfOption) error {
			o := &client.DeleteAllOfOptions{}
			o.ApplyOptions(opts)
			reached["deleteAllOf in "+o.Namespace]++
			return nil
		},
	})
	h := newHub("", "", nil)
	h.check = newCheckState(checkConfig{namespace: ns})
	j := newClient(h, inner)
	ctx := context.Background()

	err := j.DeleteAllOf(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns}})
	if err == nil || !strings.Contains(err.Error(), "refused deleteAllOf configmaps (all namespaces)") {
		t.Fatalf("a DeleteAllOf whose object names the scratch namespace but has no InNamespace: %v", err)
	}
	err = j.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "reader", Namespace: ns}})
	if err == nil || !strings.Contains(err.Error(), "refused create clusterroles.rbac.authorization.k8s.io reader") {
		t.Fatalf("a cluster-scoped object naming the scratch namespace: %v", err)
	}
	err = j.DeleteAllOf(ctx, &rbacv1.ClusterRole{}, client.InNamespace(ns))
	if err == nil || !strings.Contains(err.Error(), "refused deleteAllOf clusterroles.rbac.authorization.k8s.io") {
		t.Fatalf("a DeleteAllOf of a cluster-scoped kind InNamespace(scratch) deletes every object of the kind: %v", err)
	}
	if len(reached) != 0 {
		t.Fatalf("refused writes reached the client: %v", reached)
	}
	if err := j.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(ns)); err != nil {
		t.Fatalf("a DeleteAllOf in the scratch namespace: %v", err)
	}
	if err := j.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "inside", Namespace: ns}}); err != nil {
		t.Fatalf("a write in the scratch namespace: %v", err)
	}
	if reached["deleteAllOf in "+ns] != 1 || reached["create inside"] != 1 {
		t.Fatalf("the writes in the scratch namespace: %v", reached)
	}
}

// TestCheckInstanceOfAClusterScopedPrimary: with RECONCILE_LAB_CHECK_CLUSTER_OBJECT the check instance's cache
// sees only the scratch copy among the objects of the primary's kind (and still every object of another
// cluster-scoped kind), on the real API server, and the write guard lets the copy's own writes through while it
// refuses another object of the kind. Before, `check --go` refused every cluster-scoped primary: the scratch
// namespace does not scope cluster-scoped objects, so the instance would have reconciled the developer's own.
func TestCheckInstanceOfAClusterScopedPrimary(t *testing.T) {
	real := realClient(t)
	ns := scratchNamespace(t, real)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	copyName, mine := ns+"-reader", ns+"-someone-elses"
	for _, n := range []string{copyName, mine} {
		if err := real.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: n}}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = real.Delete(context.Background(), &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: n}})
		})
	}
	t.Setenv(EnvCheckNamespace, ns)
	t.Setenv(EnvCheckClusterObject, `{"group":"rbac.authorization.k8s.io","version":"v1","kind":"ClusterRole","resource":"clusterroles","name":"`+copyName+`"}`)
	cfg, err := checkConfigFromEnv()
	if err != nil || cfg.clusterObject == nil || cfg.clusterObject.Name != copyName {
		t.Fatalf("checkConfigFromEnv: %+v, %v", cfg, err)
	}
	s := newCheckState(cfg)
	opts, err := s.cacheOptions(realConfig(t), cache.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	c, err := cache.New(realConfig(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		t.Fatal("the cache did not start")
	}
	var roles rbacv1.ClusterRoleList
	if err := c.List(ctx, &roles); err != nil {
		t.Fatal(err)
	}
	if len(roles.Items) != 1 || roles.Items[0].Name != copyName {
		names := []string{}
		for _, r := range roles.Items {
			names = append(names, r.Name)
		}
		t.Fatalf("the cache sees %d ClusterRoles (%v), want only the copy %s", len(names), names, copyName)
	}
	var nss corev1.NamespaceList
	if err := c.List(ctx, &nss); err != nil || len(nss.Items) < 2 {
		t.Fatalf("another cluster-scoped kind is not restricted: %d namespaces, %v", len(nss.Items), err)
	}

	w := &Write{Verb: "update", Group: "rbac.authorization.k8s.io", Resource: "clusterroles", Name: copyName, Subresource: ""}
	if err := s.outsideScratch(w); err != nil {
		t.Fatalf("a write of the copy: %v", err)
	}
	w.Name = mine
	if err := s.outsideScratch(w); err == nil || !strings.Contains(err.Error(), "refused update clusterroles.rbac.authorization.k8s.io "+mine) {
		t.Fatalf("a write of another object of the kind: %v", err)
	}
	if err := s.outsideScratch(&Write{Verb: "deleteAllOf", Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}); err == nil {
		t.Fatal("a DeleteAllOf of the kind must be refused")
	}
}

// TestClusterObjectRestrictKeepsTheProgramsSelectors: the copy's name selector is ANDed into a ByObject entry the
// program set for the kind (and into the cache's default field selector when the entry has none), a kind the
// scheme does not know gets an unstructured entry, and a malformed variable stops the process's check setup.
func TestClusterObjectRestrictKeepsTheProgramsSelectors(t *testing.T) {
	own := fields.OneTermEqualSelector("metadata.name", "x")
	o := &clusterObject{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Resource: "clusterroles", Name: "copy"}
	key := &rbacv1.ClusterRole{}
	got, err := o.restrict(cache.Options{Scheme: scheme.Scheme, ByObject: map[client.Object]cache.ByObject{key: {Field: own}}}, []string{"v1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.ByObject) != 1 || got.ByObject[key].Field == nil || got.ByObject[key].Field.String() != "metadata.name=x,metadata.name=copy" {
		t.Fatalf("the program's entry: %v", got.ByObject)
	}
	got, _ = o.restrict(cache.Options{Scheme: scheme.Scheme, DefaultFieldSelector: fields.OneTermNotEqualSelector("metadata.name", "y")}, []string{"v1"})
	for _, e := range got.ByObject {
		if e.Field.String() != "metadata.name!=y,metadata.name=copy" {
			t.Fatalf("the default selector: %s", e.Field)
		}
	}
	u := &clusterObject{Group: "fleet.example.io", Version: "v1beta1", Kind: "Harbor", Resource: "harbors", Name: "copy"}
	got, _ = u.restrict(cache.Options{Scheme: scheme.Scheme}, []string{"v1beta1"})
	for k, e := range got.ByObject {
		if k.GetObjectKind().GroupVersionKind().Kind != "Harbor" || e.Field.String() != "metadata.name=copy" {
			t.Fatalf("a kind the scheme does not know: %T %v %s", k, k.GetObjectKind().GroupVersionKind(), e.Field)
		}
	}
	t.Setenv(EnvCheckNamespace, "ns")
	t.Setenv(EnvCheckClusterObject, `{"kind":"Harbor"}`)
	if _, err := checkConfigFromEnv(); err == nil || !strings.Contains(err.Error(), "does not name an object") {
		t.Fatalf("a malformed %s: %v", EnvCheckClusterObject, err)
	}
}

// TestCheckInstanceJournalsBeforeAndAfterWithTheirKind: a check instance journals the object before a write (read
// from the server through a typed client, which decodes it without apiVersion and kind) and after it (the object the
// program passed, from its cache, with them) with the same apiVersion and kind. Before, "before" had neither, and the
// stale-cache check reported a correct controller's finalizer patch as "overwrote newer state … (apiVersion, kind)".
func TestCheckInstanceJournalsBeforeAndAfterWithTheirKind(t *testing.T) {
	real := realClient(t)
	ns := scratchNamespace(t, real)
	e, h := checkInstanceHub(t, ns)
	h.check.direct = real
	j := newClient(h, real)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	if err := real.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "typed", Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := real.Get(ctx, types.NamespacedName{Namespace: ns, Name: "typed"}, &cm); err != nil {
		t.Fatal(err)
	}
	cm.APIVersion, cm.Kind = "v1", "ConfigMap" // as controller-runtime's cache hands it out
	base := cm.DeepCopy()
	cm.Finalizers = []string{"example.io/keep"}
	if err := j.Patch(ctx, &cm, client.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
	w := nextWrite(t, e)
	for name, m := range map[string]map[string]any{"before": w.Before, "after": w.After} {
		if m == nil || m["apiVersion"] != "v1" || m["kind"] != "ConfigMap" {
			t.Fatalf("%s journaled with apiVersion %v, kind %v; want v1, ConfigMap", name, m["apiVersion"], m["kind"])
		}
	}
	cm.Finalizers = nil
	_ = real.Update(ctx, &cm)
}

// checkInstanceHub is a hub connected to a fresh test editor (not paused) and set up as a check instance of ns, as
// RECONCILE_LAB_CHECK_NAMESPACE makes it.
func checkInstanceHub(t *testing.T, ns string) (*testEditor, *hub) {
	t.Helper()
	e := newTestEditor(t, false)
	h := connectedHub(t, e)
	h.check = newCheckState(checkConfig{namespace: ns})
	return e, h
}

func TestFreezingTransportWithFreezeResourcesFreezesOnlyThose(t *testing.T) {
	t.Setenv(EnvCheckFreezeCacheAt, "42")
	t.Setenv(EnvCheckFreezeResources, "resourcequotas, deployments.apps")
	cfg, err := checkConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	s := newCheckState(cfg)
	inner := &recordingTransport{}
	ft := &freezingTransport{inner: inner, s: s}
	list := func(raw string) url.Values {
		req, _ := http.NewRequest(http.MethodGet, raw, nil)
		if _, err := ft.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
		return inner.got[len(inner.got)-1].Query()
	}
	for _, frozen := range []string{"https://x/api/v1/namespaces/ns/resourcequotas?limit=500", "https://x/apis/apps/v1/namespaces/ns/deployments", "https://x/apis/apps/v1/deployments?resourceVersion=0"} {
		if q := list(frozen); q.Get("resourceVersion") != "42" || q.Get("resourceVersionMatch") != "Exact" {
			t.Errorf("%s: not frozen: %v", frozen, q)
		}
	}
	for _, current := range []string{"https://x/api/v1/namespaces/ns/configmaps?limit=500", "https://x/apis/infra.example.dev/v1alpha1/namespaces/ns/tenants", "https://x/apis/apps/v1/namespaces/ns/replicasets"} {
		if q := list(current); q.Get("resourceVersion") != "" || q.Get("resourceVersionMatch") != "" {
			t.Errorf("%s: frozen, though not listed in %s: %v", current, EnvCheckFreezeResources, q)
		}
	}
	// A watch of a resource not frozen runs at once; one of a frozen resource waits for thaw.
	done := make(chan string, 2)
	for _, w := range []string{"https://x/api/v1/namespaces/ns/configmaps?watch=true", "https://x/api/v1/namespaces/ns/resourcequotas?watch=true"} {
		go func() {
			req, _ := http.NewRequest(http.MethodGet, w, nil)
			_, _ = ft.RoundTrip(req)
			done <- w
		}()
	}
	if got := <-done; !strings.Contains(got, "configmaps") {
		t.Fatalf("the frozen resourcequotas watch ran before thaw")
	}
	s.thaw()
	<-done
	t.Setenv(EnvCheckFreezeCacheAt, "")
	if _, err := checkConfigFromEnv(); err == nil {
		t.Error(EnvCheckFreezeResources + " without a freeze is accepted")
	}
}

func TestResourceOfPath(t *testing.T) {
	for path, want := range map[string]string{
		"/api/v1/configmaps":                       "configmaps",
		"/api/v1/namespaces/ns/configmaps":         "configmaps",
		"/api/v1/namespaces":                       "namespaces",
		"/apis/apps/v1/namespaces/ns/deployments":  "deployments.apps",
		"/apis/infra.example.dev/v1alpha1/tenants": "tenants.infra.example.dev",
		"/apis/apps/v1":                            "",
		"/version":                                 "",
	} {
		if got := resourceOfPath(path); got != want {
			t.Errorf("resourceOfPath(%q) = %q, want %q", path, got, want)
		}
	}
}
