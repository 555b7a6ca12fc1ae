package bridge

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// clusterReq is a custom request type shaped like multi-cluster controllers' requests: the object's request and
// the cluster it lives in.
type clusterReq struct {
	Cluster string
	reconcile.Request
}

func eastReq(name string) clusterReq { return clusterReq{Cluster: "east", Request: req(name)} }

type shardKey struct {
	Shard int
	Name  types.NamespacedName
	note  string
}

type tenant string

type ticket int

func (t ticket) String() string { return fmt.Sprintf("ticket-%d", int(t)) }

// TestKeyText: how items of custom request types are shown, and that every text round-trips to one request.
func TestKeyText(t *testing.T) {
	for _, c := range []struct {
		item any
		want string
	}{
		{clusterReq{Cluster: "eu-1", Request: req("cart")}, "ns/cart (Cluster=eu-1)"},
		{clusterReq{Request: req("cart")}, "ns/cart"}, // the embedded Request's promoted String is not used
		{clusterReq{Cluster: "eu-1"}, "Cluster=eu-1"},
		{shardKey{Shard: 3, Name: types.NamespacedName{Name: "node-a"}, note: "x y"}, "node-a (Shard=3, note=x y)"},
		{shardKey{}, "{}"},
		{struct{ Inner clusterReq }{clusterReq{Cluster: "c", Request: req("n")}}, "Inner={ns/n (Cluster=c)}"},
		{tenant("acme"), "acme"},
		{ticket(7), "ticket-7"},
		{42, "42"},
	} {
		if got := keyText(reflect.ValueOf(c.item)); got != c.want {
			t.Errorf("keyText(%#v) = %q, want %q", c.item, got, c.want)
		}
	}
	for _, s := range []string{"ns/cart", "node-a", "ns/cart (Cluster=eu-1)", "Cluster=eu-1", "a/b/c", "{}", "ticket-7"} {
		r := requestForText(s)
		if requestKey(r) != s {
			t.Errorf("requestForText(%q) = %+v, whose key is %q", s, r, requestKey(r))
		}
	}
	if r := requestForText("ns/cart"); r != req("cart") {
		t.Errorf("an object key is interned as the object's request, got %+v", r)
	}
}

// TestKeyTableInternsOneToOne: distinct items get distinct requests and texts (a repeated text is numbered), the
// same item always the same; texts parse back; unknown texts and requests are refused.
func TestKeyTableInternsOneToOne(t *testing.T) {
	tab := newKeyTable[shardKey]()
	a := shardKey{Shard: 1, Name: types.NamespacedName{Namespace: "ns", Name: "a"}}
	b := shardKey{Shard: 2, Name: types.NamespacedName{Namespace: "ns", Name: "a"}}
	// Two items whose rendering is the same: note is rendered with %v, and these differ only in a way it hides.
	c1 := shardKey{Shard: 1, Name: a.Name, note: "same"}
	ra, rb, rc := tab.req(a), tab.req(b), tab.req(c1)
	if ra == rb || ra == rc || rb == rc {
		t.Fatalf("distinct items share a request: %v %v %v", ra, rb, rc)
	}
	if tab.req(a) != ra {
		t.Fatal("the same item was interned twice")
	}
	for item, r := range map[shardKey]reconcile.Request{a: ra, b: rb, c1: rc} {
		got, ok := tab.item(r)
		if !ok || got != item {
			t.Fatalf("item(%v) = %v, %v; want %v", r, got, ok, item)
		}
		back, ok := tab.parse(requestKey(r))
		if !ok || back != r {
			t.Fatalf("parse(%q) = %v, %v; want %v", requestKey(r), back, ok, r)
		}
	}
	if requestKey(ra) != "ns/a (Shard=1)" || requestKey(rb) != "ns/a (Shard=2)" {
		t.Fatalf("texts %q %q", requestKey(ra), requestKey(rb))
	}
	// A second item rendering as an existing text is numbered.
	tn := newKeyTable[tenant]()
	type pair struct{ x, y tenant }
	tp := newKeyTable[pair]()
	if requestKey(tp.req(pair{"a", "b"})) != "x=a, y=b" {
		t.Fatalf("got %q", requestKey(tp.req(pair{"a", "b"})))
	}
	r1, r2 := tn.req("x #2"), tn.req("x")
	if requestKey(r1) != "x #2" || requestKey(r2) != "x" {
		t.Fatalf("got %q %q", requestKey(r1), requestKey(r2))
	}
	ptab := newKeyTable[*clusterReq]()
	one, other := eastReq("p"), eastReq("p")
	p1, p2 := ptab.req(&one), ptab.req(&other)
	if p1 == p2 || requestKey(p1) != "ns/p (Cluster=east)" || requestKey(p2) != "ns/p (Cluster=east) #2" {
		t.Fatalf("distinct pointers to equal values: %q / %q", requestKey(p1), requestKey(p2))
	}
	if _, ok := tab.parse("ns/a (Shard=9)"); ok {
		t.Fatal("a text no item had was parsed")
	}
	if _, ok := tab.item(req("a")); ok {
		t.Fatal("a request no item was interned as was found")
	}
	if _, err := parseCustomKey(tab, "shards", "ns/a (Shard=9)"); err == nil || !strings.Contains(err.Error(), "never queued") {
		t.Fatalf("parseCustomKey of an unknown text: %v", err)
	}
}

// TestReplayIdenticalToStockTypedPriorityQueue: a controller with a custom request type, attached and running,
// sees exactly what the stock priority queue of that type does, and the editor sees its keys' texts.
func TestReplayIdenticalToStockTypedPriorityQueue(t *testing.T) {
	e := newTestEditor(t, false)
	h := connectedHub(t, e)
	stock := priorityqueue.New[clusterReq]("stock-typed-pq", func(o *priorityqueue.Opts[clusterReq]) {
		o.RateLimiter = defaultTypedRateLimiter[clusterReq](true)
	})
	wrapped := newTypedQueue(queueConfig{name: "typed-pq", priorityQueue: true, hub: h}, nil, newKeyTable[clusterReq]())
	noop := func(time.Duration) {}
	direct := func(add func()) { add() }
	name := func(r clusterReq) string { return r.Cluster + ":" + r.Name }
	want, got := replayKeys(stock, eastReq, name, noop, direct), replayKeys(wrapped, eastReq, name, noop, direct)
	if fmt.Sprint(want) != fmt.Sprint(got) {
		t.Fatalf("behaviour differs\nstock:  %q\nbridge: %q", want, got)
	}
	if len(want) < 15 || !slices.Contains(want, "get east:f prio=0 shutdown=false") {
		t.Fatalf("trace too short or without the items: %q", want)
	}
	e.next(func(m map[string]any) bool {
		return m["type"] == "queue" && m["key"] == "ns/f (Cluster=east)" && m["transition"] == "backoff"
	})
}

// TestReplayIdenticalToStockTypedClientGoQueue: the same with the priority queue off (client-go's rate-limited
// queue of the custom type, DefaultTypedControllerRateLimiter), on a fake clock (see
// TestReplayIdenticalToStockClientGoQueue).
func TestReplayIdenticalToStockTypedClientGoQueue(t *testing.T) {
	e := newTestEditor(t, false)
	h := connectedHub(t, e)
	name := func(r clusterReq) string { return r.Cluster + ":" + r.Name }
	run := func(build func(clk *armCountingClock) priorityqueue.PriorityQueue[clusterReq]) []string {
		clk := newArmCountingClock(time.Unix(1_700_000_000, 0))
		q := build(clk)
		return replayKeys(q, eastReq, name, func(d time.Duration) { clk.delayedAdd(func() { clk.Step(d) }) }, clk.delayedAdd)
	}
	want := run(func(clk *armCountingClock) priorityqueue.PriorityQueue[clusterReq] {
		return &clientGoAdapter[clusterReq]{workqueue.NewTypedRateLimitingQueueWithConfig(defaultTypedRateLimiter[clusterReq](false),
			workqueue.TypedRateLimitingQueueConfig[clusterReq]{Name: "stock-typed-cg", Clock: clk})}
	})
	got := run(func(clk *armCountingClock) priorityqueue.PriorityQueue[clusterReq] {
		return newTypedQueue(queueConfig{name: "typed-cg", priorityQueue: false, hub: h, clock: clk}, nil, newKeyTable[clusterReq]())
	})
	if fmt.Sprint(want) != fmt.Sprint(got) {
		t.Fatalf("behaviour differs\nstock:  %q\nbridge: %q", want, got)
	}
	if !slices.Contains(want, "get east:f prio=0 shutdown=false") {
		t.Fatalf("f never handed out: %q", want)
	}
}

// TestTypedControllerOnTheRealAPIServer: a controller-runtime controller with a custom request type (one
// ConfigMap queued once per cluster) under a real manager on the local control plane, bridged with the same two
// calls as any controller (Options, and WrapTyped for its reconciler). Paused, its keys are shown with their
// texts and why they were queued; a dry-run step of one key plans its write and persists nothing; a step of the
// other key runs exactly that reconcile, with the controller's own item; a text no item had is refused; resume
// reconciles the rest.
func TestTypedControllerOnTheRealAPIServer(t *testing.T) {
	s := onAPIServer(t, true)
	plain, ns, e, h, mgr := s.plain, s.ns, s.e, s.h, s.mgr
	var mu sync.Mutex
	var seen []clusterReq
	c := mgr.GetClient()
	rec := reconcile.TypedFunc[clusterReq](func(ctx context.Context, r clusterReq) (reconcile.Result, error) {
		mu.Lock()
		seen = append(seen, r)
		mu.Unlock()
		var cm corev1.ConfigMap
		if err := c.Get(ctx, r.NamespacedName, &cm); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		if cm.Data[r.Cluster] == "reconciled" {
			return reconcile.Result{}, nil
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data[r.Cluster] = "reconciled"
		return reconcile.Result{}, c.Update(ctx, &cm)
	})
	perCluster := handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, cm *corev1.ConfigMap) []clusterReq {
		if cm.Name != "shared" {
			return nil
		}
		r := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(cm)}
		return []clusterReq{{Cluster: "east", Request: r}, {Cluster: "west", Request: r}}
	})
	err := builder.TypedControllerManagedBy[clusterReq](mgr).
		Named("per-cluster").
		WithOptions(optionsFor(h, mgr, "per-cluster", controller.TypedOptions[clusterReq]{})).
		WatchesRawSource(source.TypedKind(mgr.GetCache(), &corev1.ConfigMap{}, perCluster)).
		Complete(wrapTyped(h, mgr, "per-cluster", rec, &corev1.ConfigMap{}))
	if err != nil {
		t.Fatal(err)
	}
	startManager(t, mgr)

	announced := e.next(func(m map[string]any) bool { return m["type"] == "controller" && m["name"] == "per-cluster" })
	if announced["paused"] != true || announced["kind"] != "ConfigMap" || announced["requestType"] != "bridge.clusterReq" {
		t.Fatalf("announcement %v: want paused, kind ConfigMap, requestType bridge.clusterReq", announced)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shared"}}
	if err := plain.Create(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	east, west := ns+"/shared (Cluster=east)", ns+"/shared (Cluster=west)"
	added := map[string]map[string]any{}
	for len(added) < 2 {
		m := e.next(func(m map[string]any) bool { return m["type"] == "queue" && m["transition"] == "added" })
		added[m["key"].(string)] = m
	}
	for _, k := range []string{east, west} {
		m := added[k]
		if m == nil {
			t.Fatalf("key %q never added; added: %v", k, added)
		}
		causes, _ := m["causes"].([]any)
		c0, _ := func() (map[string]any, bool) {
			if len(causes) == 0 {
				return nil, false
			}
			c, ok := causes[0].(map[string]any)
			return c, ok
		}()
		if c0 == nil || c0["objectKey"] != ns+"/shared" || c0["event"] != "add" || c0["resourceVersion"] != cm.ResourceVersion {
			t.Fatalf("key %q: causes %v, want the ConfigMap's add at RV %s", k, causes, cm.ResourceVersion)
		}
	}

	id := int64(100)
	// command returns the reply and the reconcile ends the editor read before it.
	var ends []map[string]any
	command := func(c CommandMsg) map[string]any {
		t.Helper()
		id++
		c.ID, c.Controller = id, "per-cluster"
		h.handle(c)
		ends = nil
		return e.next(func(m map[string]any) bool {
			if m["type"] == "reconcileEnd" {
				ends = append(ends, m)
			}
			return m["type"] == "reply" && m["id"] == float64(id)
		})
	}
	// Dry run of east: its write is planned, nothing is persisted.
	dry := command(CommandMsg{Op: OpDryRun, Key: east})
	writes, _ := dry["writes"].([]any)
	if dry["ok"] != true || len(writes) != 1 || writes[0].(map[string]any)["verb"] != "update" {
		t.Fatalf("dry run reply %v: want one planned update", dry)
	}
	var after corev1.ConfigMap
	if err := plain.Get(context.Background(), client.ObjectKeyFromObject(cm), &after); err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != cm.ResourceVersion || len(after.Data) != 0 {
		t.Fatalf("the dry run persisted: RV %s → %s, data %v", cm.ResourceVersion, after.ResourceVersion, after.Data)
	}
	// Step west: exactly that reconcile, with the controller's own item.
	mu.Lock()
	seen = nil // the dry run's
	mu.Unlock()
	step := command(CommandMsg{Op: OpStep, Key: west})
	if step["ok"] != true {
		t.Fatalf("step reply %v", step)
	}
	mu.Lock()
	got := slices.Clone(seen)
	mu.Unlock()
	if want := []clusterReq{{Cluster: "west", Request: reconcile.Request{NamespacedName: client.ObjectKeyFromObject(cm)}}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("the step reconciled %v, want %v", got, want)
	}
	if err := plain.Get(context.Background(), client.ObjectKeyFromObject(cm), &after); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(after.Data, map[string]string{"west": "reconciled"}) {
		t.Fatalf("after stepping west the ConfigMap holds %v", after.Data)
	}
	if len(ends) != 1 || ends[0]["controller"] != "per-cluster" || ends[0]["key"] != west || ends[0]["dryRun"] == true || ends[0]["error"] != nil {
		t.Fatalf("reconcile ends before the step's reply: %v, want west's, without error", ends)
	}
	// A text no item had is refused, with the reason.
	if r := command(CommandMsg{Op: OpStep, Key: ns + "/shared (Cluster=north)", Force: true}); r["ok"] == true || !strings.Contains(fmt.Sprint(r["error"]), "never queued") {
		t.Fatalf("step of an unknown key: %v", r)
	}
	// Resume: east is reconciled too (and the re-adds the two updates cause settle).
	if r := command(CommandMsg{Op: OpResume}); r["ok"] != true {
		t.Fatalf("resume: %v", r)
	}
	eventually(t, "east reconciled after resume", func() bool {
		var now corev1.ConfigMap
		return plain.Get(context.Background(), client.ObjectKeyFromObject(cm), &now) == nil && now.Data["east"] == "reconciled" && now.Data["west"] == "reconciled"
	})
}

// TestCustomKeyNamedBeforeTheWorkersStart: a text named before the controller's workers start (its initial list
// may still be queueing items) is read again once they started, not refused; once they run, an unknown text is
// refused at once.
func TestCustomKeyNamedBeforeTheWorkersStart(t *testing.T) {
	e := newTestEditor(t, true)
	h := connectedHub(t, e)
	keys := keyTableFor[clusterReq](h, "late") // shared with the reconciler, as Options and WrapTyped share it
	q := newTypedQueue(queueConfig{name: "late", priorityQueue: true, hub: h}, nil, keys)
	got := make(chan clusterReq, 1)
	rec := reconcile.TypedFunc[clusterReq](func(_ context.Context, r clusterReq) (reconcile.Result, error) {
		got <- r
		return reconcile.Result{}, nil
	})
	wrapTyped(h, nil, "late", rec)
	h.clientWrapped.Store(true) // as bridge.Setup's client would
	h.handle(CommandMsg{ID: 1, Op: OpReconcileNow, Controller: "late", Key: "ns/a (Cluster=east)"})
	h.handle(CommandMsg{ID: 2, Op: OpDryRun, Controller: "late", Key: "ns/a (Cluster=east)"})
	q.Add(eastReq("a")) // the initial list's add, after the commands
	worker := make(chan struct{})
	go func() {
		defer close(worker)
		q.Get() // starts the workers (paused: blocks until ShutDown)
	}()
	replies := map[float64]map[string]any{}
	for len(replies) < 2 {
		m := e.next(isType("reply"))
		replies[m["id"].(float64)] = m
	}
	if m := replies[1]; m["ok"] != true {
		t.Fatalf("reconcile now named before the workers started: %v, want ok once the item was queued", m)
	}
	if m := replies[2]; m["ok"] != true {
		t.Fatalf("dry run named before the workers started: %v, want it run once the item was queued", m)
	}
	if r := <-got; r != eastReq("a") {
		t.Fatalf("the dry run reconciled %v", r)
	}
	h.handle(CommandMsg{ID: 3, Op: OpReconcileNow, Controller: "late", Key: "ns/b (Cluster=east)"})
	if m := replyTo(e, 3); m["ok"] == true || !strings.Contains(fmt.Sprint(m["error"]), "never queued") {
		t.Fatalf("an unknown text once the workers run: %v", m)
	}
	q.ShutDown()
	<-worker
}
