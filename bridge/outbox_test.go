package bridge

import (
	"encoding/json"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestOutboxOrderAcrossQueues: transitions of two controllers' queues, appended to their own spools, reach the
// writer merged in the order they happened (with the hub's own messages in between), each with its cause; a
// queue that shut down is drained and dropped from the sources, and what it sends after that is not lost.
func TestOutboxOrderAcrossQueues(t *testing.T) {
	h := newHub("", "", nil)
	a := newQueue(queueConfig{name: "a", hub: h})
	b := newQueue(queueConfig{name: "b", hub: h})
	t.Cleanup(a.ShutDown)
	t.Cleanup(b.ShutDown)
	h.box.take(burst{}) // the announcements
	failing(a, req("a1"))
	failing(b, req("b0"), req("b1")) // so their Forget is reported

	var want []string
	for i := range 5 {
		a.Add(req(fmt.Sprint("a", i)))
		want = append(want, fmt.Sprintf("a ns/a%d added", i))
		b.Add(req(fmt.Sprint("b", i)))
		want = append(want, fmt.Sprintf("b ns/b%d added", i))
		if i == 2 {
			h.send(&PingMsg{At: 1})
			want = append(want, "ping")
		}
	}
	b.Forget(req("b0"))
	want = append(want, "b ns/b0 forgotten")
	got := describeBurst(h.box.take(burst{}))
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("order:\n got %v\nwant %v", got, want)
	}

	a.ShutDown()
	if got := describeBurst(h.box.take(burst{})); fmt.Sprint(got) != "[a  shutdown]" {
		t.Fatalf("after shutdown: %v", got)
	}
	h.box.take(burst{}) // a drained after its shutdown: dropped from the sources
	h.box.mu.Lock()
	n := len(h.box.sources)
	h.box.mu.Unlock()
	if n != 1 {
		t.Fatalf("sources after a's shutdown was drained: %d, want 1", n)
	}
	a.Forget(req("a1")) // after it is gone: through the hub's own spool, still in order
	b.Forget(req("b1"))
	if got := describeBurst(h.box.take(burst{})); fmt.Sprint(got) != "[a ns/a1 forgotten b ns/b1 forgotten]" {
		t.Fatalf("after a is gone: %v", got)
	}
	if h.box.pending() != 0 {
		t.Fatalf("pending after take: %d", h.box.pending())
	}
}

// describeBurst is "<controller> <key> <transition>" per queue record (with its cause checked), "ping" for a ping.
func describeBurst(bu burst) []string {
	var out []string
	for i := range bu.recs {
		switch m := bu.recs[i].message(bu.causes).(type) {
		case *QueueMsg:
			if m.Transition == "added" && (len(m.Causes) != 1 || m.Causes[0].Kind == "") {
				out = append(out, "missing cause")
			}
			out = append(out, m.Controller+" "+m.Key+" "+m.Transition)
		case *PingMsg:
			out = append(out, "ping")
		}
		if i > 0 && bu.recs[i].seq < bu.recs[i-1].seq {
			out = append(out, "out of sequence")
		}
	}
	return out
}

// TestWireIDsKeptWithKeyState: transitions carry the key id the queue keeps with the key's state; the writer
// defines each key once per connection from it (no lookup by key) and the editor's expansion of the frames is
// exactly the transitions. A new connection starts a new generation: records of the old one still waiting
// fall back to ids by key, and every key is defined again on the new connection.
func TestWireIDsKeptWithKeyState(t *testing.T) {
	h := newHub("", "", nil)
	q := newQueue(queueConfig{name: "w", hub: h})
	t.Cleanup(q.ShutDown)
	h.box.take(burst{}) // the announcement
	cycle := func(names ...string) {
		for _, n := range names {
			q.Add(req(n))
			failing(q, req(n)) // so its Forget is reported
		}
		for range names {
			k, _ := q.Get()
			q.Forget(k)
			q.Done(k)
		}
	}
	// encode encodes a burst on connection f and returns the expansion, and how often each key was defined.
	encode := func(f *frameEncoder, d *TransitionDecoder, bu burst) (got, want []string, defs map[string]int) {
		defs = map[string]int{}
		for i := 0; i < len(bu.recs); {
			if bu.recs[i].kind != recQueue {
				i++
				continue
			}
			for _, r := range bu.recs[i:] {
				m := r.message(bu.causes).(*QueueMsg)
				want = append(want, m.Key+" "+m.Transition)
			}
			line, n := f.appendFrame(nil, bu.recs[i:], bu.causes)
			want = want[:len(want)-(len(bu.recs)-i-n)]
			i += n
			var m TransitionsMsg
			if err := json.Unmarshal(line, &m); err != nil {
				t.Fatal(err)
			}
			for _, pair := range m.Keys {
				defs[fmt.Sprint(pair.([]any)[1])]++
			}
			qs, ok, err := d.ExpandLine(line)
			if !ok || err != nil {
				t.Fatalf("expand: %v %v", ok, err)
			}
			for _, o := range qs {
				got = append(got, fmt.Sprint(o["key"], " ", o["transition"]))
			}
		}
		return got, want, defs
	}

	f1, d1 := newFrameEncoder(h), NewTransitionDecoder()
	cycle("a", "b")
	cycle("a", "c")
	bu := h.box.take(burst{})
	for _, r := range bu.recs {
		if r.kind == recQueue && !r.noKey && r.wire>>32 != f1.gen {
			t.Fatalf("%s %s: wire %x, not of the connection's generation %d", requestKey(r.key), transitionNames[r.tr], r.wire, f1.gen)
		}
	}
	got, want, defs := encode(f1, d1, bu)
	if fmt.Sprint(got) != fmt.Sprint(want) || len(got) != 16 {
		t.Fatalf("expansion:\n got %v\nwant %v", got, want)
	}
	if fmt.Sprint(defs) != "map[ns/a:1 ns/b:1 ns/c:1]" {
		t.Fatalf("keys defined on the first connection: %v", defs)
	}
	if len(f1.ids) != 0 {
		t.Fatalf("the writer looked %d keys up by key; every record carried its id", len(f1.ids))
	}

	cycle("a", "d") // sent before the reconnect: ids of generation 1
	q.mu.Lock()
	q.lockedFold() // folded (ids assigned) before the reconnect, as a burst of the old connection's writer would
	q.mu.Unlock()
	f2, d2 := newFrameEncoder(h), NewTransitionDecoder()
	cycle("b")
	got, want, defs = encode(f2, d2, h.box.take(burst{}))
	if fmt.Sprint(got) != fmt.Sprint(want) || len(got) != 12 {
		t.Fatalf("expansion after the reconnect:\n got %v\nwant %v", got, want)
	}
	if fmt.Sprint(defs) != "map[ns/a:1 ns/b:1 ns/d:1]" {
		t.Fatalf("keys defined on the second connection: %v", defs)
	}
	if _, ok := f2.ids[req("b")]; len(f2.ids) != 2 || ok {
		t.Fatalf("keys looked up by key on the second connection: %v (want a and d, sent before it)", f2.ids)
	}
}

// TestTakeNeverPutsATransitionBeforeAnOlderHubMessage: while a controller's transitions and the hub's own messages
// (replies, such as a snapshot) are pushed concurrently with the writer's takes, no transition is handed out
// before a hub message with a lower sequence number. (With the own spool taken first, a take between a reply's push
// and the next transition's could hand the transition out first; the editor, rebuilding the queue's state from the
// snapshot it read next, forgot that transition: a key queued after the snapshot showed as idle.)
func TestTakeNeverPutsATransitionBeforeAnOlderHubMessage(t *testing.T) {
	h := newHub("", "", nil)
	q := newQueue(queueConfig{name: "snap", hub: h})
	t.Cleanup(q.ShutDown)
	h.box.take(burst{}) // the announcement
	const n = 20000
	keys := make([]reconcile.Request, n)
	for i := range keys {
		keys[i] = req(fmt.Sprint("k", i))
	}
	failing(q, keys...) // every Forget below is reported
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			// Stay well inside the spools' limits, so a descheduled taker (2 busy cores) never makes the bridge drop
			// (dropping is the designed answer to a slow editor; this test is about order, not about dropping).
			for h.box.pending() > ctrlBuffer/4 {
				runtime.Gosched()
			}
			h.sendCtrl(&PingMsg{At: int64(i)})
			q.Forget(keys[i])
		}
	}()
	var maxTransition uint64
	pings, checked := 0, 0
	var b burst
	for finished := false; ; {
		select {
		case <-done:
			finished = true
		default:
		}
		b = h.box.take(b)
		for i := range b.recs {
			r := &b.recs[i]
			switch r.kind {
			case recQueue:
				maxTransition = max(maxTransition, r.seq)
			case recMsg:
				if _, ok := r.msg.(*PingMsg); ok {
					pings++
					if r.seq < maxTransition {
						t.Fatalf("hub message %d handed out after a transition with sequence %d", r.seq, maxTransition)
					}
				}
			}
			checked++
		}
		if finished && h.box.pending() == 0 {
			break
		}
	}
	if pings != n || checked < 2*n {
		t.Fatalf("saw %d pings and %d records, want %d and %d (nothing dropped)", pings, checked, n, 2*n)
	}
}

// TestSnapshotReplyIsOneInstantOfTheOrder: while keys are added (hot adds and slow-path adds) and snapshots are
// answered concurrently, every snapshot reply holds every key whose "added" transition the editor read before it.
// (The reverse may happen: a take can hand a reply out before an older transition, outbox.take.) (Read under the queue's lock and pushed after it, a reply could sort after an
// add it did not contain: the editor, rebuilding the queue's state from it, forgot that key — a key queued while
// the editor resynced showed as idle.)
func TestSnapshotReplyIsOneInstantOfTheOrder(t *testing.T) {
	h := newHub("", "", nil)
	q := newQueue(queueConfig{name: "snap", hub: h})
	t.Cleanup(q.ShutDown)
	h.box.take(burst{}) // the announcement
	const n = 3000
	done, started := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		<-started // so the adds and the snapshots overlap however the goroutines are scheduled
		for i := range n {
			k := req(fmt.Sprint("k", i))
			if i%2 == 0 {
				q.Add(k) // hot path
			} else {
				q.ReconcileNow(k) // slow path
			}
		}
	}()
	snaps := make(chan struct{})
	go func() {
		defer close(snaps)
		for id := int64(1); ; id++ {
			h.handle(CommandMsg{ID: id, Op: OpSnapshot, Controller: "snap"})
			if id == 1 {
				close(started)
			}
			select {
			case <-done:
				return
			default:
			}
		}
	}()
	added := map[string]bool{}
	replies := 0
	var b burst
	for finished := false; ; {
		select {
		case <-snaps:
			finished = true
		default:
		}
		b = h.box.take(b)
		for i := range b.recs {
			switch m := b.recs[i].message(b.causes).(type) {
			case *QueueMsg:
				if m.Transition == "added" {
					added[m.Key] = true
				}
			case *ReplyMsg:
				replies++
				ctrl := m.Snapshot["controllers"].([]any)[0].(map[string]any)
				in := map[string]bool{}
				for _, k := range ctrl["keys"].([]map[string]any) {
					in[k["key"].(string)] = true
				}
				for k := range added {
					if !in[k] {
						t.Fatalf("reply %d does not hold %s, whose added the editor read before it", m.ID, k)
					}
				}
			}
		}
		if finished && h.box.pending() == 0 {
			break
		}
	}
	if len(added) != n || replies == 0 {
		t.Fatalf("read %d added and %d replies, want %d and some", len(added), replies, n)
	}
}

// gate blocks the calls it is armed for until released: armed, the next call signals entered and waits.
type gate struct {
	armed    atomic.Bool
	entered  chan struct{}
	released chan struct{}
}

func newGate() *gate { return &gate{entered: make(chan struct{}), released: make(chan struct{})} }

func (g *gate) pass() {
	if g.armed.CompareAndSwap(true, false) {
		close(g.entered)
		<-g.released
	}
}

// gatedClock is a fake clock whose Now blocks at its gate.
type gatedClock struct {
	*clocktesting.FakeClock
	g *gate
}

func (c gatedClock) Now() time.Time { c.g.pass(); return c.FakeClock.Now() }

// gatedLimiter is a rate limiter whose NumRequeues blocks at its gate.
type gatedLimiter struct {
	workqueue.TypedRateLimiter[reconcile.Request]
	g *gate
}

func (l gatedLimiter) NumRequeues(k reconcile.Request) int {
	l.g.pass()
	return l.TypedRateLimiter.NumRequeues(k)
}

// TestHotAddDuringASnapshotSortsAfterItsReply is the interleaving TestSnapshotReplyIsOneInstantOfTheOrder finds
// only under load, made deterministic: a snapshot folds the log (gated) and, before it replies, a hot Add claims
// its slot (after that fold, so the snapshot lacks it); the Add then reads gated only after the snapshot replied
// and ungated the queue, so it stays on the hot path. Its "added" must reach the editor after the reply (which
// does not hold it): the editor, rebuilding the queue's state from the reply, would otherwise show the key idle.
// (With the op's place in the order taken at the claim, the added went out first.)
func TestHotAddDuringASnapshotSortsAfterItsReply(t *testing.T) {
	limiterGate, clockGate := newGate(), newGate()
	h := newHub("", "", nil)
	q := newQueue(queueConfig{name: "snap", hub: h,
		limiter: gatedLimiter{DefaultRateLimiter(true), limiterGate},
		clock:   gatedClock{clocktesting.NewFakeClock(time.UnixMilli(1_000_000)), clockGate}})
	t.Cleanup(q.ShutDown)
	h.box.take(burst{}) // the announcement
	q.Add(req("first"))

	limiterGate.armed.Store(true) // the snapshot stops after its fold, reading the first key's failures
	snapped := make(chan struct{})
	go func() { defer close(snapped); h.handle(CommandMsg{ID: 7, Op: OpSnapshot, Controller: "snap"}) }()
	<-limiterGate.entered
	clockGate.armed.Store(true) // the Add stops after its claim, stamping its op
	added := make(chan struct{})
	go func() { defer close(added); q.Add(req("late")) }()
	<-clockGate.entered
	close(limiterGate.released)
	<-snapped // replied and ungated
	close(clockGate.released)
	<-added

	var order []string
	b := h.box.take(burst{})
	for i := range b.recs {
		switch m := b.recs[i].message(b.causes).(type) {
		case *QueueMsg:
			order = append(order, m.Transition+" "+m.Key)
		case *ReplyMsg:
			var in []string
			for _, k := range m.Snapshot["controllers"].([]any)[0].(map[string]any)["keys"].([]map[string]any) {
				in = append(in, k["key"].(string))
			}
			order = append(order, fmt.Sprintf("reply %v", in))
		}
	}
	if want := "[added ns/first reply [ns/first] added ns/late]"; fmt.Sprint(order) != want {
		t.Fatalf("the editor reads\n %v\nwant\n %v", order, want)
	}
}
