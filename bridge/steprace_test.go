package bridge

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// The tests of this file force the orders in which a step of a key (Step with hasKey) and the workers meet in the
// inner queue: a worker that takes the key before the step's own add reaches the inner queue, a worker handed the
// key while that add is in flight, and a shutdown meanwhile.

// raceInner is an inner priority queue with two hooks, each run once (cleared when it runs): afterGet runs in a
// worker's Get once the inner queue handed it a key, before the bridge sees the key; beforeBoost runs in a step's
// add (priority math.MaxInt) before the add reaches the inner queue.
type raceInner struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	mu          sync.Mutex
	afterGet    func(reconcile.Request)
	beforeBoost func()
}

func (r *raceInner) hook(f *func()) func() {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := *f
	*f = nil
	return g
}

func (r *raceInner) setAfterGet(f func(reconcile.Request)) {
	r.mu.Lock()
	r.afterGet = f
	r.mu.Unlock()
}

func (r *raceInner) setBeforeBoost(f func()) {
	r.mu.Lock()
	r.beforeBoost = f
	r.mu.Unlock()
}

func (r *raceInner) GetWithPriority() (reconcile.Request, int, bool) {
	key, p, shutdown := r.PriorityQueue.GetWithPriority()
	r.mu.Lock()
	f := r.afterGet
	r.afterGet = nil
	r.mu.Unlock()
	if f != nil && !shutdown {
		f(key)
	}
	return key, p, shutdown
}

func (r *raceInner) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	if o.Priority != nil && *o.Priority == math.MaxInt {
		if f := r.hook(&r.beforeBoost); f != nil {
			f()
		}
	}
	r.PriorityQueue.AddWithOpts(o, items...)
}

// raceQueue is a test queue over the priority queue whose inner queue is a raceInner.
func raceQueue(t *testing.T) (*Queue, *hub, *raceInner) {
	t.Helper()
	q, h := testQueue(t, true)
	ri := &raceInner{PriorityQueue: q.inner}
	q.inner = ri
	return q, h, ri
}

// stepAndWait steps key (force as given) and returns the step's reply.
func stepAndWait(t *testing.T, q *Queue, key reconcile.Request, force bool) ReplyMsg {
	t.Helper()
	replies := make(chan ReplyMsg, 1)
	q.Step(key, true, force, 1, func(r ReplyMsg) { replies <- r })
	select {
	case r := <-replies:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no step reply")
		return ReplyMsg{}
	}
}

// nextHandOut is the next key a worker (see worker) got.
func nextHandOut(t *testing.T, got <-chan string) string {
	t.Helper()
	select {
	case k := <-got:
		return k
	case <-time.After(10 * time.Second):
		t.Fatal("no key handed out")
		return ""
	}
}

// checkAnnounced checks that every hand-out ("processing") of key the editor was told of follows a transition
// that queued the key since its previous hand-out, and returns how many hand-outs it was told of.
func checkAnnounced(t *testing.T, q *Queue, h *hub, key string) int {
	t.Helper()
	q.Snapshot() // folds the op log
	queued, n := false, 0
	var seq []string
	for _, m := range queueMsgs(h) {
		if m.Key != key {
			continue
		}
		seq = append(seq, m.Transition)
		switch m.Transition {
		case TransitionAdded, TransitionReady, TransitionWaiting, TransitionBackoff:
			queued = true
		case TransitionProcessing:
			if !queued {
				t.Errorf("%s handed out with no transition queuing it before (transitions %v)", key, seq)
			}
			queued = false
			n++
		}
	}
	return n
}

// checkOneReconcile checks, after a step of ns/k was served, that the step ran exactly one reconcile of it and
// that the editor was told it was queued before it: (when paused, once the worker is back at the gate, resume)
// a key added next is the next hand-out, and the editor saw one announced hand-out of ns/k.
func checkOneReconcile(t *testing.T, q *Queue, h *hub, got <-chan string, paused bool) {
	t.Helper()
	if paused {
		eventually(t, "the worker back at the gate", func() bool { return gateWaiters(q) == 1 })
		q.Resume()
	}
	q.Add(req("next"))
	if g := nextHandOut(t, got); g != "next/0" {
		t.Fatalf("the worker got %s before next/0: the step ran more than one reconcile", g)
	}
	if n := checkAnnounced(t, q, h, "ns/k"); n != 1 {
		t.Errorf("the editor was told of %d hand-outs of ns/k, want 1", n)
	}
}

// TestStepWorkerTakesKeyBeforeStepAdd: a paused worker that wakes for a step and takes the key before the step's
// own add reaches the inner queue (the step was claimable before its add: the hook lets the worker win then)
// would leave that add in the inner queue: the key reconciled once more after resume, before any key queued
// after it, with no transition telling the editor it was queued. Exactly one reconcile per step, every hand-out
// announced: for a ready key (the add raises its priority) and for a forced step of a key not queued.
func TestStepWorkerTakesKeyBeforeStepAdd(t *testing.T) {
	for _, force := range []bool{false, true} {
		t.Run(fmt.Sprintf("force=%v", force), func(t *testing.T) {
			q, h, ri := raceQueue(t)
			k := req("k")
			took := make(chan struct{})
			ri.setAfterGet(func(key reconcile.Request) {
				if key == k {
					close(took)
				}
			})
			ri.setBeforeBoost(func() {
				q.mu.Lock()
				claimable := len(q.steps) > 0
				q.mu.Unlock()
				if claimable {
					<-took // the losing order: a worker takes the key before this add lands
				}
			})
			got, _ := pausedWorkers(t, q, 1)
			if !force {
				q.AddWithOpts(prio(2), k)
			}
			if r := stepAndWait(t, q, k, force); !r.OK {
				t.Fatalf("step reply %+v", r)
			}
			want := "k/2"
			if force {
				want = "k/0"
			}
			if g := nextHandOut(t, got); g != want {
				t.Fatalf("the step ran %s, want %s", g, want)
			}
			checkOneReconcile(t, q, h, got, true)
		})
	}
}

// TestStepKeyTakenBeforeStepAdd: a worker already inside the inner Get (paused meanwhile, or running) has taken
// the key when a step of it comes, so the step's add lands in the inner queue after the key left it. The step is
// served by that worker's key; the copy the add left in the inner queue is dropped, never handed out (the
// controller would reconcile the key once more, the editor not told it was queued).
func TestStepKeyTakenBeforeStepAdd(t *testing.T) {
	for _, paused := range []bool{true, false} {
		t.Run(fmt.Sprintf("paused=%v", paused), func(t *testing.T) {
			q, h, ri := raceQueue(t)
			k := req("k")
			took, release := make(chan struct{}), make(chan struct{})
			ri.setAfterGet(func(reconcile.Request) { close(took); <-release })
			got := make(chan string, 10)
			var wg sync.WaitGroup
			wg.Add(1)
			go worker(q, got, &wg)
			eventually(t, "the worker inside the inner Get", func() bool { return innerWaiting(q) })
			q.Add(k)
			<-took
			if paused {
				q.Pause()
			}
			replies := make(chan ReplyMsg, 1)
			q.Step(k, true, false, 1, func(r ReplyMsg) { replies <- r })
			close(release)
			if g := nextHandOut(t, got); g != "k/0" {
				t.Fatalf("the step ran %s", g)
			}
			if r := <-replies; !r.OK {
				t.Fatalf("step reply %+v", r)
			}
			checkOneReconcile(t, q, h, got, paused)
		})
	}
}

// TestStepBoostNeverLeaks: the step's boost (math.MaxInt) never reaches the controller nor the editor: a key
// queued again (priority 3) after a step whose add landed after its worker took the key is handed out with
// priority 3. priority 9223372036854775807 is no JSON int the editor takes ("transitions.items[0]: priority must
// be an int or null", seen in `reconcile-lab check --go`'s stale-cache runs: the transition was skipped).
func TestStepBoostNeverLeaks(t *testing.T) {
	q, h, ri := raceQueue(t)
	k := req("k")
	took, release := make(chan struct{}), make(chan struct{})
	ri.setAfterGet(func(reconcile.Request) { close(took); <-release })
	got := make(chan string, 10)
	var wg sync.WaitGroup
	wg.Add(1)
	go worker(q, got, &wg)
	eventually(t, "the worker inside the inner Get", func() bool { return innerWaiting(q) })
	q.Add(k)
	<-took
	q.Pause()
	replies := make(chan ReplyMsg, 1)
	q.Step(k, true, false, 1, func(r ReplyMsg) { replies <- r })
	close(release)
	if g := nextHandOut(t, got); g != "k/0" {
		t.Fatalf("the step ran %s", g)
	}
	if r := <-replies; !r.OK {
		t.Fatalf("step reply %+v", r)
	}
	eventually(t, "the worker back at the gate", func() bool { return gateWaiters(q) == 1 })
	q.AddWithOpts(prio(3), k) // joins the step's add still in the inner queue
	q.Resume()
	if g := nextHandOut(t, got); g != "k/3" {
		t.Fatalf("the key queued again was handed out as %s, want k/3", g)
	}
	q.Snapshot()
	for _, m := range queueMsgs(h) {
		if m.Priority != nil && *m.Priority >= math.MaxInt32 {
			t.Errorf("%s of %s reported with priority %d (the step's boost), want the key's own", m.Transition, m.Key, *m.Priority)
		}
	}
}

// TestStepKeyHandedOutWhileStepAddInFlight: a worker the inner queue hands the key to while the step's add is
// on its way waits for that add with the key in hand, then runs it for the step (once); a shutdown meanwhile
// releases it (the key given back to the inner queue, even a draining one) and answers the step with an error.
func TestStepKeyHandedOutWhileStepAddInFlight(t *testing.T) {
	for _, shutdown := range []bool{false, true} {
		t.Run(fmt.Sprintf("shutdown=%v", shutdown), func(t *testing.T) {
			q, h, ri := raceQueue(t)
			k := req("k")
			took, release := make(chan struct{}), make(chan struct{})
			ri.setAfterGet(func(reconcile.Request) { close(took); <-release })
			got := make(chan string, 10)
			var wg sync.WaitGroup
			wg.Add(1)
			go worker(q, got, &wg)
			eventually(t, "the worker inside the inner Get", func() bool { return innerWaiting(q) })
			q.Add(k)
			<-took
			q.Pause()
			ri.setBeforeBoost(func() {
				close(release)
				eventually(t, "the worker waiting for the step's add", func() bool {
					q.mu.Lock()
					defer q.mu.Unlock()
					return q.addWaiters == 1
				})
				if shutdown {
					q.ShutDownWithDrain()
				}
			})
			r := stepAndWait(t, q, k, false)
			if shutdown {
				if r.OK || r.Error != "the controller's queue shut down" {
					t.Fatalf("step reply %+v", r)
				}
				done := make(chan struct{})
				go func() { wg.Wait(); close(done) }()
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					t.Fatal("the worker waiting for the step's add was not released by the shutdown")
				}
				if len(got) != 0 {
					t.Fatalf("handed out %s after the shutdown", <-got)
				}
				return
			}
			if !r.OK {
				t.Fatalf("step reply %+v", r)
			}
			if g := nextHandOut(t, got); g != "k/0" {
				t.Fatalf("the step ran %s", g)
			}
			checkOneReconcile(t, q, h, got, true)
		})
	}
}

// TestStepKeyBeingReconciledIsAnnounced: a step of a key being reconciled queues it again for after that
// reconcile; the editor is told ("added", with the step as cause), so the step's hand-out is not unannounced.
func TestStepKeyBeingReconciledIsAnnounced(t *testing.T) {
	for _, pq := range []bool{true, false} {
		t.Run(fmt.Sprintf("priorityQueue=%v", pq), func(t *testing.T) {
			q, h := testQueue(t, pq)
			k := req("k")
			q.Add(k)
			inFlight, _, _ := q.GetWithPriority()
			q.Pause()
			replies := make(chan ReplyMsg, 1)
			q.Step(k, true, false, 1, func(r ReplyMsg) { replies <- r })
			q.Done(inFlight)
			stepped, p, _ := q.GetWithPriority()
			if stepped != k || p != 0 {
				t.Fatalf("the step handed out %v priority %d", stepped, p)
			}
			if tr := q.takeTriggers(stepped); len(tr) != 1 || tr[0].Kind != CauseManual {
				t.Errorf("the step's reconcile has triggers %+v, want the step", tr)
			}
			q.Done(stepped)
			if r := <-replies; !r.OK {
				t.Fatalf("step reply %+v", r)
			}
			if n := checkAnnounced(t, q, h, "ns/k"); n != 2 {
				t.Errorf("the editor was told of %d hand-outs of ns/k, want 2", n)
			}
		})
	}
}

// TestStepWaitingKeyAnnouncedReady: a step of a key that waits (a requeue-after, or a backoff retry, not due yet)
// makes it ready now; the editor is told so ("ready", with the step as cause) before the step's hand-out, so the
// key's transitions read as the inner queue's state changes: waiting (or backoff) → ready → processing → done.
func TestStepWaitingKeyAnnouncedReady(t *testing.T) {
	for _, pq := range []bool{true, false} {
		for _, backoff := range []bool{false, true} {
			t.Run(fmt.Sprintf("priorityQueue=%v/backoff=%v", pq, backoff), func(t *testing.T) {
				q, h, _ := fakeClockQueue(t, "stepwait", pq)
				k := req("k")
				first := TransitionWaiting
				if backoff {
					q.AddRateLimited(k) // the priority queue asks its limiter (and the bridge is told) on its own goroutine
					first = TransitionBackoff
					eventually(t, "the backoff recorded", func() bool {
						q.mu.Lock()
						defer q.mu.Unlock()
						return q.keys[k] != nil && q.keys[k].queued == queuedWaiting
					})
				} else {
					q.AddAfter(k, time.Hour)
				}
				q.Pause()
				replies := make(chan ReplyMsg, 1)
				q.Step(k, true, false, 1, func(r ReplyMsg) { replies <- r })
				got, _, _ := q.GetWithPriority()
				if got != k {
					t.Fatalf("the step handed out %v", got)
				}
				q.Done(got)
				if r := <-replies; !r.OK {
					t.Fatalf("step reply %+v", r)
				}
				q.Snapshot() // folds the op log
				var seq []string
				var ready *QueueMsg
				for _, m := range queueMsgs(h) {
					if m.Key != "ns/k" {
						continue
					}
					seq = append(seq, m.Transition)
					if m.Transition == TransitionReady {
						ready = m
					}
				}
				want := fmt.Sprint([]string{first, TransitionReady, TransitionProcessing, TransitionDone})
				if fmt.Sprint(seq) != want {
					t.Fatalf("transitions of ns/k %v, want %s", seq, want)
				}
				if len(ready.Causes) != 1 || ready.Causes[0].Kind != CauseManual || !strings.Contains(ready.Causes[0].Note, "step") {
					t.Errorf("ready causes %+v, want the step", ready.Causes)
				}
			})
		}
	}
}

// TestStepOfKeyServedFirst: a worker that claimed a step without key and is handed the key a step of that key
// waits for runs the key for that step (only the key can serve it) and gives its own step back to the next
// worker, which runs the next key queued. Each step runs one reconcile; the key runs once.
func TestStepOfKeyServedFirst(t *testing.T) {
	q, h, ri := raceQueue(t)
	k := req("k")
	took, release := make(chan struct{}), make(chan struct{})
	ri.setAfterGet(func(reconcile.Request) { close(took); <-release })
	got, _ := pausedWorkers(t, q, 2)
	q.Add(k)
	replies := make(chan ReplyMsg, 2)
	reply := func(r ReplyMsg) { replies <- r }
	q.Step(reconcile.Request{}, false, false, 1, reply) // a worker claims it and takes k from the inner queue
	<-took
	q.Step(k, true, false, 2, reply) // claimed by the other worker, which waits for k
	close(release)
	if g := nextHandOut(t, got); g != "k/0" {
		t.Fatalf("first hand-out %s", g)
	}
	if r := <-replies; !r.OK || r.ID != 2 {
		t.Fatalf("first reply %+v, want the step of k's (id 2)", r)
	}
	q.Add(req("x"))
	if g := nextHandOut(t, got); g != "x/0" {
		t.Fatalf("the step without key ran %s, want x/0", g)
	}
	if r := <-replies; !r.OK || r.ID != 1 {
		t.Fatalf("second reply %+v", r)
	}
	eventually(t, "both workers back at the gate", func() bool { return gateWaiters(q) == 2 })
	q.Resume()
	q.Add(req("next"))
	if g := nextHandOut(t, got); g != "next/0" {
		t.Fatalf("after resume the workers got %s before next/0", g)
	}
	if n := checkAnnounced(t, q, h, "ns/k"); n != 1 {
		t.Errorf("the editor was told of %d hand-outs of ns/k, want 1", n)
	}
}
