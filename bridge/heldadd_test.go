package bridge

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// handOut is one key a worker got and the triggers the reconciler wrapper would read for it.
type handOut struct {
	key      string
	triggers []Cause
}

// triggerWorker runs Get → read the triggers (as the reconciler wrapper does before Reconcile) → Done until
// shutdown, sending each hand-out on got.
func triggerWorker(q *Queue, got chan<- handOut, wg *sync.WaitGroup) {
	defer wg.Done()
	for {
		k, _, sd := q.GetWithPriority()
		if sd {
			return
		}
		got <- handOut{key: k.Name, triggers: q.takeTriggers(k)}
		q.Done(k)
		q.Forget(k)
	}
}

func nextTriggered(t *testing.T, got <-chan handOut) handOut {
	t.Helper()
	select {
	case h := <-got:
		return h
	case <-time.After(10 * time.Second):
		t.Fatal("no key handed out")
		return handOut{}
	}
}

func causeKinds(cs []Cause) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.Kind+":"+c.Note)
	}
	return out
}

// TestHeldKeyAddedAgainWhileHeld: a worker inside the inner Get when the pause comes receives k and the bridge
// holds it (processing for the inner queue). An add of k meanwhile marks it queued again in the inner queue, which
// hands k out a second time after the held hand-out's Done. The held hand-out's triggers are the causes up to the
// hold, the second hand-out's are the add made while k was held; and the editor reads the inner queue's states:
// the key queued again while the held hand-out is processing, so the second hand-out follows a transition that
// queued it (as for an add during any reconcile: "processing", "added", "done", "processing").
func TestHeldKeyAddedAgainWhileHeld(t *testing.T) {
	for _, pq := range []bool{true, false} {
		t.Run(fmt.Sprintf("priorityQueue=%v", pq), func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.UnixMilli(1_000_000))
			h := newHub("", "", clk)
			q := newQueue(queueConfig{name: fmt.Sprintf("held-add-%v", pq), priorityQueue: pq, hub: h, clock: clk, countGetters: true})
			t.Cleanup(q.ShutDown)
			got := make(chan handOut, 10)
			var wg sync.WaitGroup
			wg.Add(1)
			go triggerWorker(q, got, &wg)
			eventually(t, "worker inside the inner Get", func() bool { return innerWaiting(q) })
			q.Pause()
			k := req("k")
			q.Add(k) // the worker receives k and holds it
			eventually(t, "k held", func() bool { q.mu.Lock(); defer q.mu.Unlock(); return len(q.held) == 1 })
			q.ReconcileNow(k) // k queued again in the inner queue, for after the held hand-out's Done
			snap := q.Snapshot()["keys"].([]map[string]any)
			if len(snap) != 1 || snap[0]["state"] != "ready" || len(snap[0]["causes"].([]Cause)) != 2 {
				t.Errorf("snapshot of the held key queued again %v, want one ready key with both causes", snap)
			}
			if len(got) != 0 {
				t.Fatal("a paused queue handed out a key")
			}
			eventually(t, "worker at the gate", func() bool { return gateWaiters(q) == 1 })
			q.Resume()

			first := nextTriggered(t, got)
			if first.key != "k" || len(first.triggers) != 1 || first.triggers[0].Note != PlainCauseNote {
				t.Errorf("held hand-out %s triggers %v, want the first add's only", first.key, causeKinds(first.triggers))
			}
			second := nextTriggered(t, got)
			if second.key != "k" || len(second.triggers) != 1 || second.triggers[0].Kind != CauseManual ||
				!strings.Contains(second.triggers[0].Note, "reconcile now") {
				t.Errorf("second hand-out %s triggers %v, want the add made while k was held", second.key, causeKinds(second.triggers))
			}
			eventually(t, "second reconcile done", func() bool { return !q.isProcessing(k) })

			q.Snapshot() // folds the op log
			var seq []string
			for _, m := range queueMsgs(h) {
				if m.Key == "ns/k" {
					seq = append(seq, m.Transition)
				}
			}
			want := []string{TransitionAdded, TransitionAdded, TransitionProcessing, TransitionAdded, TransitionDone, TransitionProcessing, TransitionDone}
			if strings.Join(seq, " ") != strings.Join(want, " ") {
				t.Errorf("transitions of ns/k %v, want %v", seq, want)
			}
		})
	}
}

// TestHeldKeyAddedAfterDelayWhileHeld: on the client-go queue (whose delays follow the fake clock), a requeue-after
// of a held key waits while the held hand-out runs; the editor is told it waits again after that "processing", and
// the hand-out when the delay passed has the requeue-after as its trigger.
func TestHeldKeyAddedAfterDelayWhileHeld(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.UnixMilli(1_000_000))
	h := newHub("", "", clk)
	q := newQueue(queueConfig{name: "held-add-after", hub: h, clock: clk, countGetters: true})
	t.Cleanup(q.ShutDown)
	got := make(chan handOut, 10)
	var wg sync.WaitGroup
	wg.Add(1)
	go triggerWorker(q, got, &wg)
	eventually(t, "worker inside the inner Get", func() bool { return innerWaiting(q) })
	q.Pause()
	k := req("k")
	q.Add(k)
	eventually(t, "k held", func() bool { q.mu.Lock(); defer q.mu.Unlock(); return len(q.held) == 1 })
	q.AddAfter(k, 5*time.Second)
	eventually(t, "worker at the gate", func() bool { return gateWaiters(q) == 1 })
	q.Resume()
	if first := nextTriggered(t, got); len(first.triggers) != 1 || first.triggers[0].Note != PlainCauseNote {
		t.Errorf("held hand-out triggers %v, want the first add's only", causeKinds(first.triggers))
	}
	eventually(t, "held reconcile done", func() bool { return !q.isProcessing(k) })
	q.Snapshot()
	var seq []string
	for _, m := range queueMsgs(h) {
		if m.Key == "ns/k" {
			seq = append(seq, m.Transition)
		}
	}
	want := []string{TransitionAdded, TransitionWaiting, TransitionProcessing, TransitionWaiting, TransitionDone}
	if strings.Join(seq, " ") != strings.Join(want, " ") {
		t.Errorf("transitions of ns/k %v, want %v", seq, want)
	}
	select {
	case g := <-got:
		t.Fatalf("k handed out again before its delay passed (triggers %v)", causeKinds(g.triggers))
	default:
	}
	clk.Step(5 * time.Second)
	second := nextTriggered(t, got)
	if len(second.triggers) != 1 || second.triggers[0].Kind != CauseRequeueAfter || second.triggers[0].AfterMs != 5000 {
		t.Errorf("second hand-out triggers %v, want the requeue-after made while k was held", second.triggers)
	}
}
