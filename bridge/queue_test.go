package bridge

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func req(name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
}

func prio(p int) priorityqueue.AddOpts { return priorityqueue.AddOpts{Priority: &p} }

// testQueue is a bridge queue on an unconnected hub: messages stay in the hub's buffer for the test to read.
func testQueue(t *testing.T, pq bool) (*Queue, *hub) {
	t.Helper()
	h := newHub("", "", nil)
	q := newQueue(queueConfig{name: fmt.Sprintf("test-%s-%v", t.Name(), pq), priorityQueue: pq, hub: h, countGetters: true})
	t.Cleanup(q.ShutDown)
	return q, h
}

// fakeClockQueue is a queue named name (the priority queue when pq) whose clock and hub's clock is a fake one at
// 1,000,000 ms: its waits and backoffs pass only when the test steps the clock. Shut down when the test ends.
func fakeClockQueue(t *testing.T, name string, pq bool) (*Queue, *hub, *clocktesting.FakeClock) {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.UnixMilli(1_000_000))
	h := newHub("", "", clk)
	q := newQueue(queueConfig{name: name, priorityQueue: pq, hub: h, clock: clk})
	t.Cleanup(q.ShutDown)
	return q, h, clk
}

// queueMsgs drains the hub's outbox and returns the queue messages.
func queueMsgs(h *hub) []*QueueMsg {
	var out []*QueueMsg
	b := h.box.take(burst{})
	for _, r := range b.recs {
		if qm, ok := r.message(b.causes).(*QueueMsg); ok {
			out = append(out, qm)
		}
	}
	return out
}

// replay runs one operation script on a queue and returns what an observer of the queue sees: every Get's key
// and priority, Len, NumRequeues and shutdown. advance moves the queue's clock once, before a Get that waits for a
// delayed add; delayed runs one delayed add (AddRateLimited) and returns only once the queue has taken that add in, so that
// no later clock movement can overtake it (a plain call for queues that take delayed adds in synchronously).
func replay(q priorityqueue.PriorityQueue[reconcile.Request], advance func(time.Duration),
	delayed func(add func())) []string {
	return replayKeys(q, req, func(r reconcile.Request) string { return r.Name }, advance, delayed)
}

// replayKeys is replay for a queue of any item type: key makes the item named name, nameOf reads it back.
func replayKeys[T comparable](q priorityqueue.PriorityQueue[T], key func(name string) T, nameOf func(T) string,
	advance func(time.Duration), delayed func(add func())) []string {
	req := key
	var trace []string
	log := func(f string, a ...any) { trace = append(trace, fmt.Sprintf(f, a...)) }
	get := func() T {
		k, p, sd := q.GetWithPriority()
		log("get %s prio=%d shutdown=%v", nameOf(k), p, sd)
		return k
	}
	q.Add(req("a"))
	q.AddWithOpts(prio(10), req("b"))
	q.AddWithOpts(prio(5), req("c"))
	delayed(func() { q.AddAfter(req("d"), time.Hour) })
	q.AddWithOpts(prio(-100), req("e"))
	q.Add(req("a")) // de-duplicated
	log("len %d", q.Len())
	q.Add(req("d")) // a waiting key made ready (drops the wait)
	log("len %d", q.Len())
	b := get()
	get()
	get()
	q.Add(b) // re-added while processing: handed out only after Done
	log("len %d", q.Len())
	d := get()
	q.Done(b)
	get()
	get()
	q.Done(d)
	delayed(func() { q.AddRateLimited(req("f")) })
	delayed(func() { q.AddRateLimited(req("f")) })
	log("len %d requeues(f)=%d", q.Len(), q.NumRequeues(req("f")))
	advance(time.Second)
	f := get()
	q.Forget(f)
	log("requeues(f)=%d", q.NumRequeues(f))
	q.Done(f)
	delayed(func() { q.AddWithOpts(priorityqueue.AddOpts{After: 2 * time.Millisecond, Priority: new(3)}, req("g")) })
	advance(time.Second)
	get()
	log("shuttingDown=%v", q.ShuttingDown())
	q.ShutDown()
	get()
	log("shuttingDown=%v", q.ShuttingDown())
	return trace
}

// TestReplayIdenticalToStockPriorityQueue: with the editor attached (a real connection) and running, the bridge
// queue over the priority queue shows exactly the stock priority queue's behaviour for the same operations.
func TestReplayIdenticalToStockPriorityQueue(t *testing.T) {
	e := newTestEditor(t, false)
	h := connectedHub(t, e)
	stock := priorityqueue.New[reconcile.Request]("stock-pq", func(o *priorityqueue.Opts[reconcile.Request]) {
		o.RateLimiter = DefaultRateLimiter(true)
	})
	wrapped := newQueue(queueConfig{name: "wrapped-pq", priorityQueue: true, hub: h})
	noop := func(time.Duration) {}
	direct := func(add func()) { add() }
	want, got := replay(stock, noop, direct), replay(wrapped, noop, direct)
	if fmt.Sprint(want) != fmt.Sprint(got) {
		t.Fatalf("behaviour differs\nstock:  %q\nbridge: %q", want, got)
	}
	if len(want) < 15 {
		t.Fatalf("trace too short: %q", want)
	}
	// The editor saw the transitions.
	e.next(func(m map[string]any) bool {
		return m["type"] == "queue" && m["key"] == "ns/f" && m["transition"] == "backoff"
	})
}

// armCountingClock is a fake clock that counts NewTimer calls and lets a test wait for the next one.
//
// client-go's delaying queue takes AddAfter/AddRateLimited entries off a channel on its own goroutine (waitingLoop)
// and, while it has waiting entries, re-arms its head timer with clock.NewTimer on every pass of that loop. So
// while the clock stands still, one NewTimer call after a delayed add means the add has left the channel and sits
// in the queue's wait heap (where a second add of the same key is merged into the first, keeping the earlier time).
// The fake clock's HasWaiters cannot tell this: the queue's 10 s heartbeat ticker is always a waiter.
type armCountingClock struct {
	*clocktesting.FakeClock
	mu    sync.Mutex
	cond  *sync.Cond
	armed int
}

func newArmCountingClock(t time.Time) *armCountingClock {
	c := &armCountingClock{FakeClock: clocktesting.NewFakeClock(t)}
	c.cond = sync.NewCond(&c.mu)
	return c
}

func (c *armCountingClock) NewTimer(d time.Duration) clock.Timer {
	tm := c.FakeClock.NewTimer(d)
	c.mu.Lock()
	c.armed++
	c.cond.Broadcast()
	c.mu.Unlock()
	return tm
}

// delayedAdd runs add (one delayed add, or one clock step that fires the queue's head timer) while the queue is
// idle and returns once the delaying queue has re-armed its timer, i.e. has taken the add off its channel (or
// handled the fired entries). Waits on a condition, never on real time.
func (c *armCountingClock) delayedAdd(add func()) {
	c.mu.Lock()
	before := c.armed
	c.mu.Unlock()
	add()
	c.mu.Lock()
	for c.armed == before {
		c.cond.Wait()
	}
	c.mu.Unlock()
}

// TestReplayIdenticalToStockClientGoQueue: the same with the priority queue off (client-go's rate-limited queue
// with DefaultTypedControllerRateLimiter), on a fake clock.
//
// The replay adds key f rate limited twice (delays 5 ms and 10 ms). Each delayed add before them and they
// themselves are waited for until the delaying queue has taken them in (armCountingClock.delayedAdd), one at a
// time, before the clock moves: if the clock passed 10 ms while
// the second add was still in the queue's channel, client-go would Add f a second time after the first f had been
// handed out, so f would come back after Done: a real client-go behaviour, but one that depends on goroutine
// scheduling, so the two queues' traces would differ at random (seen once in ~10 runs under load).
func TestReplayIdenticalToStockClientGoQueue(t *testing.T) {
	e := newTestEditor(t, false)
	h := connectedHub(t, e)
	run := func(build func(clk *armCountingClock) priorityqueue.PriorityQueue[reconcile.Request]) []string {
		clk := newArmCountingClock(time.Unix(1_700_000_000, 0))
		q := build(clk)
		// One step is enough and deterministic: the queue is idle with its head timer armed (delayedAdd), the
		// step fires it, and advance returns once the queue has re-armed for its next entry (d's stale one-hour
		// wait stays in the heap), so it is idle again. A step racing the queue's own Now-then-NewTimer could
		// arm a timer past the last step and hang the Get. Only one second passes per step, so the heartbeat
		// (10 s) and d's one-hour wait never fire.
		return replay(q, func(d time.Duration) { clk.delayedAdd(func() { clk.Step(d) }) }, clk.delayedAdd)
	}
	want := run(func(clk *armCountingClock) priorityqueue.PriorityQueue[reconcile.Request] {
		return &clientGoAdapter[reconcile.Request]{workqueue.NewTypedRateLimitingQueueWithConfig(DefaultRateLimiter(false),
			workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{Name: "stock-cg", Clock: clk})}
	})
	got := run(func(clk *armCountingClock) priorityqueue.PriorityQueue[reconcile.Request] {
		return newQueue(queueConfig{name: "wrapped-cg", priorityQueue: false, hub: h, clock: clk})
	})
	if fmt.Sprint(want) != fmt.Sprint(got) {
		t.Fatalf("behaviour differs\nstock:  %q\nbridge: %q", want, got)
	}
	// f was handed out once: the two rate-limited adds were merged in the wait heap.
	fGets := 0
	for _, line := range want {
		if line == "get f prio=0 shutdown=false" {
			fGets++
		}
	}
	if fGets != 1 {
		t.Fatalf("f handed out %d times, want once: %q", fGets, want)
	}
}

// worker runs Get → report → Done like a controller worker until shutdown.
func worker(q *Queue, got chan<- string, wg *sync.WaitGroup) {
	defer wg.Done()
	for {
		k, p, sd := q.GetWithPriority()
		if sd {
			return
		}
		got <- fmt.Sprintf("%s/%d", k.Name, p)
		q.Done(k)
		q.Forget(k)
	}
}

// pausedWorkers pauses q and starts n workers (see worker) that send each key they get on the returned channel
// (buffered 100); it returns once all n wait at the pause gate. The WaitGroup is done when every worker saw shutdown.
func pausedWorkers(t *testing.T, q *Queue, n int) (chan string, *sync.WaitGroup) {
	t.Helper()
	q.Pause()
	got := make(chan string, 100)
	wg := &sync.WaitGroup{}
	wg.Add(n)
	for range n {
		go worker(q, got, wg)
	}
	eventually(t, fmt.Sprintf("%d paused worker(s)", n), func() bool { return gateWaiters(q) == n })
	return got, wg
}

func gateWaiters(q *Queue) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.gateWaiters
}

// TestPauseStepResume: paused workers take nothing; each step runs exactly one key (in the queue's order); step
// with a key runs that key next even while it waits; resume drains the rest; shutdown releases paused workers.
func TestPauseStepResume(t *testing.T) {
	for _, pq := range []bool{true, false} {
		t.Run(fmt.Sprintf("priorityQueue=%v", pq), func(t *testing.T) {
			q, _ := testQueue(t, pq)
			got, wg := pausedWorkers(t, q, 2)
			q.Add(req("a"))
			q.AddWithOpts(prio(7), req("b"))
			q.AddAfter(req("late"), time.Hour)
			if len(got) != 0 {
				t.Fatalf("a paused queue handed out %d keys", len(got))
			}
			replies := make(chan ReplyMsg, 10)
			reply := func(r ReplyMsg) { replies <- r }

			q.Step(reconcile.Request{}, false, false, 1, reply)
			first := <-got
			want := "b/7"
			if !pq {
				want = "a/0"
			}
			if first != want {
				t.Fatalf("first step ran %s, want %s", first, want)
			}
			if r := <-replies; !r.OK || r.ID != 1 {
				t.Fatalf("step reply %+v", r)
			}
			eventually(t, "workers back at the gate", func() bool { return gateWaiters(q) == 2 })
			if len(got) != 0 {
				t.Fatalf("one step ran more than one reconcile: %d more", len(got))
			}

			// Step this key: "late" waits an hour; it runs next, with its own priority.
			q.Step(req("late"), true, false, 2, reply)
			if k := <-got; k != "late/0" {
				t.Fatalf("step-key ran %s, want late/0", k)
			}
			if r := <-replies; !r.OK || r.ID != 2 {
				t.Fatalf("step-key reply %+v", r)
			}
			eventually(t, "workers back at the gate", func() bool { return gateWaiters(q) == 2 })
			if len(got) != 0 {
				t.Fatal("step-key ran more than one reconcile")
			}

			// A key not in the queue: refused without force, added and run with force.
			q.Step(req("nope"), true, false, 3, reply)
			if r := <-replies; r.OK || r.Error == "" {
				t.Fatalf("step of an absent key: %+v", r)
			}
			q.Step(req("new"), true, true, 4, reply)
			if k := <-got; k != "new/0" {
				t.Fatalf("forced step ran %s", k)
			}
			<-replies

			q.Resume()
			rest := "a/0"
			if !pq {
				rest = "b/0"
			}
			if k := <-got; k != rest {
				t.Fatalf("resume ran %s, want %s", k, rest)
			}
			// Both workers wait inside the inner Get now; pause, then shut down: both released.
			eventually(t, "workers in the inner Get", func() bool { q.mu.Lock(); defer q.mu.Unlock(); return q.getters.Load() == 2 })
			q.Pause()
			q.ShutDown()
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("ShutDown left paused workers blocked")
			}
		})
	}
}

// TestStepWithoutKeyOnEmptyOrRunningQueue: refused at once with a reason once the workers run.
func TestStepWithoutKeyOnEmptyOrRunningQueue(t *testing.T) {
	q, _ := testQueue(t, true)
	var r ReplyMsg
	q.Step(reconcile.Request{}, false, false, 1, func(x ReplyMsg) { r = x })
	if r.OK || r.Error == "" {
		t.Fatalf("step while running: %+v", r)
	}
	pausedWorkers(t, q, 1)
	q.Step(reconcile.Request{}, false, false, 2, func(x ReplyMsg) { r = x })
	if r.OK || r.ID != 2 || r.Error != "the queue holds no key" {
		t.Fatalf("step of an empty queue: %+v", r)
	}
}

// TestStepWithoutKeyWhileEveryKeyWaits: a step without key on a paused queue whose only keys wait for a due time
// (a requeue-after, a backoff retry: both wait the same way) is refused at once, saying so, rather than holding the caller until the first
// of them is due (a Step button that hung for the 45 s of a RequeueAfter, or the minutes of a long backoff).
func TestStepWithoutKeyWhileEveryKeyWaits(t *testing.T) {
	for _, pq := range []bool{true, false} {
		t.Run(fmt.Sprintf("priorityQueue=%v", pq), func(t *testing.T) {
			q, _ := testQueue(t, pq)
			got, _ := pausedWorkers(t, q, 1)
			q.AddAfter(req("later"), time.Hour)
			q.AddWithOpts(priorityqueue.AddOpts{After: 2 * time.Hour}, req("much-later"))
			replies := make(chan ReplyMsg, 1)
			q.Step(reconcile.Request{}, false, false, 1, func(r ReplyMsg) { replies <- r })
			select {
			case r := <-replies:
				if r.OK || r.ID != 1 || !strings.Contains(r.Error, "no key is ready") {
					t.Fatalf("step while every key waits: %+v", r)
				}
			default:
				t.Fatal("a step without key while every key waits was not answered at once: it waits for the first due time")
			}
			if len(got) != 0 {
				t.Fatalf("a refused step ran a reconcile: %s", <-got)
			}
		})
	}
}

// TestStepWithoutKeyBeforeWorkersStart: controller-runtime builds the queue, fills it with the initial list while
// its caches sync, and only then starts the workers. A step without key sent in between (a CLI "step" right
// after launching the program) waits for the workers and runs the first key, instead of finding the queue empty;
// when the workers start with nothing queued it is refused then; a shutdown answers it.
func TestStepWithoutKeyBeforeWorkersStart(t *testing.T) {
	for _, pq := range []bool{true, false} {
		t.Run(fmt.Sprintf("priorityQueue=%v", pq), func(t *testing.T) {
			q, _ := testQueue(t, pq)
			q.Pause()
			replies := make(chan ReplyMsg, 10)
			reply := func(r ReplyMsg) { replies <- r }
			q.Step(reconcile.Request{}, false, false, 1, reply)
			select {
			case r := <-replies:
				t.Fatalf("a step before the workers started was answered at once: %+v", r)
			default:
			}
			q.Add(req("initial")) // the initial list arrives while the caches sync
			got := make(chan string, 10)
			var wg sync.WaitGroup
			wg.Add(1)
			go worker(q, got, &wg) // the caches synced: the workers start
			if k := <-got; k != "initial/0" {
				t.Fatalf("the step ran %s, want initial/0", k)
			}
			if r := <-replies; !r.OK || r.ID != 1 {
				t.Fatalf("step reply %+v", r)
			}
			eventually(t, "the worker back at the gate", func() bool { return gateWaiters(q) == 1 })
			if len(got) != 0 {
				t.Fatal("one step ran more than one reconcile")
			}

			// Workers that start with an empty queue: refused then.
			q2, _ := testQueue(t, pq)
			q2.Pause()
			q2.Step(reconcile.Request{}, false, false, 2, reply)
			wg.Add(1)
			go worker(q2, got, &wg)
			if r := <-replies; r.OK || r.ID != 2 || r.Error != "the queue holds no key" {
				t.Fatalf("step of a queue that started empty: %+v", r)
			}

			// Shut down before the workers ever started: answered.
			q3, _ := testQueue(t, pq)
			q3.Pause()
			q3.Step(reconcile.Request{}, false, false, 3, reply)
			q3.ShutDown()
			if r := <-replies; r.OK || r.ID != 3 || r.Error != "the controller's queue shut down" {
				t.Fatalf("step of a queue shut down before its workers started: %+v", r)
			}
		})
	}
}

// TestHeldKeyWhenPausedDuringGet: a worker already inside the inner Get when the pause comes keeps the key it
// receives held; the next step hands it out, and shutdown with held keys and a drain does not deadlock.
func TestHeldKeyWhenPausedDuringGet(t *testing.T) {
	for _, pq := range []bool{true, false} {
		t.Run(fmt.Sprintf("priorityQueue=%v", pq), func(t *testing.T) {
			q, _ := testQueue(t, pq)
			got := make(chan string, 10)
			var wg sync.WaitGroup
			wg.Add(1)
			go worker(q, got, &wg)
			// The worker is now (or soon) blocked in the inner Get; pause, then add.
			eventually(t, "worker inside the inner Get", func() bool { return innerWaiting(q) })
			q.Pause()
			q.Add(req("x"))
			eventually(t, "the key held", func() bool { q.mu.Lock(); defer q.mu.Unlock(); return len(q.held) == 1 })
			if len(got) != 0 {
				t.Fatal("a paused queue handed out a key")
			}
			if q.Len() != 1 {
				t.Fatalf("Len with one held key = %d", q.Len())
			}
			replies := make(chan ReplyMsg, 1)
			q.Step(reconcile.Request{}, false, false, 9, func(r ReplyMsg) { replies <- r })
			if k := <-got; k != "x/0" {
				t.Fatalf("step ran %s", k)
			}
			<-replies
			// Hold another key, then shut down with a drain: returns, worker released.
			eventually(t, "worker paused", func() bool { return gateWaiters(q) == 1 })
			q.Resume()
			eventually(t, "worker inside the inner Get", func() bool { return innerWaiting(q) })
			q.Pause()
			q.Add(req("y"))
			eventually(t, "the key held", func() bool { q.mu.Lock(); defer q.mu.Unlock(); return len(q.held) == 1 })
			done := make(chan struct{})
			go func() { q.ShutDownWithDrain(); wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("ShutDownWithDrain deadlocked with a held key")
			}
		})
	}
}

// innerWaiting reports whether no worker is at the pause gate and none is processing (so the one worker is in
// the inner Get).
func innerWaiting(q *Queue) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.getters.Load() > 0
}

// TestPrioritiesKept: the controller sees the priority queue's order and priorities through the bridge.
func TestPrioritiesKept(t *testing.T) {
	q, _ := testQueue(t, true)
	q.AddWithOpts(prio(0), req("low"))
	q.AddWithOpts(prio(10), req("high"))
	q.AddWithOpts(prio(5), req("mid"))
	q.AddWithOpts(prio(20), req("low")) // raised
	var order []string
	for range 3 {
		k, p, _ := q.GetWithPriority()
		order = append(order, fmt.Sprintf("%s/%d", k.Name, p))
		q.Done(k)
	}
	if fmt.Sprint(order) != "[low/20 high/10 mid/5]" {
		t.Fatalf("order %v", order)
	}
}

// TestTransitionsReported: added (priority, cause), waiting (due), backoff (failures, delay from the limiter),
// processing (every cause since the last Get), done, forgotten, ready after a reset.
func TestTransitionsReported(t *testing.T) {
	q, h, clk := fakeClockQueue(t, "tr", false)
	k := req("k")
	q.AddWithOpts(prio(3), k)
	q.AddAfter(k, time.Minute) // no-op for a ready key, but a cause
	got, _, _ := q.GetWithPriority()
	// The causes since the last Get become the reconcile's triggers (the processing transition carries none: the
	// editor has them from the added transitions).
	if tr := q.takeTriggers(got); len(tr) != 2 || tr[1].Kind != CauseRequeueAfter {
		t.Fatalf("triggers %+v", tr)
	}
	q.AddRateLimited(got)
	q.AddRateLimited(got)
	q.Done(got)
	q.Forget(got)
	q.AddAfter(req("w"), 5*time.Second)
	msgs := queueMsgs(h)
	var seq []string
	for _, m := range msgs {
		seq = append(seq, m.Key+":"+m.Transition)
	}
	want := "[ns/k:added ns/k:added ns/k:processing ns/k:backoff ns/k:backoff ns/k:done ns/k:forgotten ns/w:waiting]"
	if fmt.Sprint(seq) != want {
		t.Fatalf("transitions %v\nwant %s", seq, want)
	}
	if msgs[2].Causes != nil || msgs[0].Causes == nil || msgs[1].Causes[0].Kind != CauseRequeueAfter {
		t.Fatalf("causes: added %+v, added %+v, processing %+v", msgs[0].Causes, msgs[1].Causes, msgs[2].Causes)
	}
	b1, b2 := msgs[3], msgs[4]
	if b1.Failures != 1 || b1.DelayMs != 5 || b2.Failures != 2 || b2.DelayMs != 10 || b2.Causes[0].Kind != CauseBackoff {
		t.Fatalf("backoff %+v %+v", b1, b2)
	}
	if b1.DueAt != 1_000_005 {
		t.Fatalf("backoff due %d", b1.DueAt)
	}
	if w := msgs[7]; w.DueAt != 1_005_000 || w.DelayMs != 5000 {
		t.Fatalf("waiting %+v", w)
	}
	// The wait expires on the clock: "ready".
	eventually(t, "a timer on the fake clock", clk.HasWaiters)
	clk.Step(5 * time.Second)
	eventually(t, "ready reported", func() bool {
		for _, m := range queueMsgs(h) {
			if m.Key == "ns/w" && m.Transition == TransitionReady {
				return true
			}
		}
		return false
	})
}

// TestResetBackoff: failures forgotten, and a key waiting for its backoff retry becomes ready now.
func TestResetBackoff(t *testing.T) {
	q, _ := testQueue(t, true)
	k := req("k")
	for range 12 { // 5 ms · 2^11 ≈ 10 s
		q.AddRateLimited(k)
	}
	eventually(t, "failures counted", func() bool { return q.NumRequeues(k) == 12 })
	q.ResetBackoff(reconcile.Request{}, false)
	if n := q.NumRequeues(k); n != 0 {
		t.Fatalf("requeues after reset %d", n)
	}
	got, _, _ := q.GetWithPriority() // ready now, not in ~10 s
	if got != k {
		t.Fatalf("got %v", got)
	}
}

// TestStepKeyWhileBackingOff: step this key runs a key that backs off for a long time at once.
func TestStepKeyWhileBackingOff(t *testing.T) {
	q, _ := testQueue(t, true)
	k := req("k")
	for range 15 {
		q.AddRateLimited(k)
	}
	q.Add(req("other"))
	eventually(t, "failures counted", func() bool { return q.NumRequeues(k) == 15 })
	q.Pause()
	replies := make(chan ReplyMsg, 1)
	q.Step(k, true, false, 1, func(r ReplyMsg) { replies <- r })
	got, p, _ := q.GetWithPriority()
	if got != k || p != 0 {
		t.Fatalf("step-key handed out %v prio %d", got, p)
	}
	if p == math.MaxInt {
		t.Fatal("the step's raised priority leaked to the controller")
	}
	q.Done(got)
	if r := <-replies; !r.OK {
		t.Fatalf("reply %+v", r)
	}
}

// failing marks keys as having rate-limiter failures the editor was told of (what a backoff does), so their
// Forget is reported.
func failing(q *Queue, keys ...reconcile.Request) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.lockedFold()
	for _, k := range keys {
		q.failing[k] = struct{}{}
	}
	q.nFailing.Store(int32(len(q.failing)))
}

// TestForgetReportedOnlyWhenItResetsFailures: the Forget after every successful reconcile is reported only for a
// key whose failures the editor was told of (once: a second Forget resets nothing), on both inner queues and on
// the hot path as on the gated one; the editor's Reset Backoff reports it for a key that never failed too.
func TestForgetReportedOnlyWhenItResetsFailures(t *testing.T) {
	for _, pq := range []bool{true, false} {
		t.Run(fmt.Sprintf("priorityQueue=%v", pq), func(t *testing.T) {
			q, h, clk := fakeClockQueue(t, "fg", pq)
			a, b := req("a"), req("b")
			cycle := func(k reconcile.Request, fail bool) {
				q.Add(k)
				got, _ := q.Get()
				if got != k {
					t.Fatalf("got %v, want %v", got, k)
				}
				if fail {
					q.AddRateLimited(k)
				} else {
					q.Forget(k)
				}
				q.Done(k)
			}
			transitions := func() string {
				var seq []string
				for _, m := range queueMsgs(h) {
					seq = append(seq, m.Key+":"+m.Transition)
				}
				return fmt.Sprint(seq)
			}
			queueMsgs(h) // the announcement
			cycle(a, false)
			if got, want := transitions(), "[ns/a:added ns/a:processing ns/a:done]"; got != want {
				t.Fatalf("a success of a key that never failed: %s, want %s", got, want)
			}
			if q.nFailing.Load() != 0 {
				t.Fatalf("failing keys %d", q.nFailing.Load())
			}
			cycle(b, true)
			// (The priority queue takes adds in on its own goroutine, and waits on the real clock.)
			eventually(t, "b's backoff", func() bool { return q.nFailing.Load() == 1 })
			eventually(t, "b ready again", func() bool { clk.Step(time.Second); return q.Len() == 1 })
			if got := transitions(); !strings.Contains(got, "ns/b:backoff") || strings.Contains(got, "forgotten") {
				t.Fatalf("a failure: %s", got)
			}
			// b is retried after its backoff and succeeds: its failures are reset, reported once.
			got, _ := q.Get()
			q.Forget(got)
			q.Forget(got) // resets nothing more
			q.Done(got)
			if got := transitions(); strings.Count(got, "ns/b:forgotten") != 1 {
				t.Fatalf("b's success after a failure: %s, want one forgotten", got)
			}
			if q.NumRequeues(b) != 0 || q.nFailing.Load() != 0 {
				t.Fatalf("after the forget: requeues %d, failing keys %d", q.NumRequeues(b), q.nFailing.Load())
			}
			// A gated Forget (paused) follows the same rule.
			q.Pause()
			q.Forget(a)
			if got := transitions(); strings.Contains(got, "forgotten") {
				t.Fatalf("a paused forget of a key that never failed: %s", got)
			}
			q.Resume()
			// The editor's Reset Backoff of a key reports it even when the bridge saw no failure.
			q.ResetBackoff(a, true)
			if got := transitions(); !strings.Contains(got, "ns/a:forgotten") {
				t.Fatalf("reset backoff: %s", got)
			}
		})
	}
}

// TestClientGoKeepsWaitAfterAdd: with the priority queue off, client-go's delaying queue keeps a RequeueAfter or a
// backoff retry when the key is added meanwhile (an event) and adds the key again when it is due, after the key ran
// for the event: one more reconcile. It is reported as an add with the wait's cause, not as a reconcile with no
// cause from a queue the editor shows empty. The priority queue drops the wait (no second reconcile).
func TestClientGoKeepsWaitAfterAdd(t *testing.T) {
	for _, pq := range []bool{false, true} {
		t.Run(fmt.Sprintf("priorityQueue=%v", pq), func(t *testing.T) {
			q, h, clk := fakeClockQueue(t, "late", pq)
			wait, retry := req("requeue-after"), req("retry")
			q.AddAfter(wait, 10*time.Second) // a Result{RequeueAfter: 10s}
			q.AddRateLimited(retry)
			q.AddRateLimited(retry) // second failure: 10 ms
			q.Add(wait)             // an event of each while they wait
			q.Add(retry)
			for range 2 {
				k, _, _ := q.GetWithPriority()
				q.Done(k)
				q.Forget(k)
			}
			queueMsgs(h) // what came before the due times
			clk.Step(10 * time.Second)
			if !pq {
				// Reported as they happen, before any worker takes the keys: the queue is not shown empty.
				added := map[string]bool{}
				eventually(t, "the adds client-go made when the waits were due reported", func() bool {
					for _, m := range queueMsgs(h) {
						if m.Transition == TransitionAdded && len(m.Causes) == 1 {
							added[m.Key] = true
						}
					}
					return added["ns/requeue-after"] && added["ns/retry"]
				})
				for range 2 {
					got, _, _ := q.GetWithPriority() // client-go hands both out again
					tr := q.takeTriggers(got)
					if len(tr) != 1 || (got == wait && tr[0].Kind != CauseRequeueAfter) || (got == retry && tr[0].Kind != CauseBackoff) {
						t.Fatalf("%s ran again with triggers %+v: want the wait's own cause", requestKey(got), tr)
					}
					q.Done(got)
				}
				return
			}
			q.Add(req("marker"))
			if got, _, _ := q.GetWithPriority(); got != req("marker") {
				t.Fatalf("the priority queue ran %s again: it drops a wait when the key is added", requestKey(got))
			}
		})
	}
}
