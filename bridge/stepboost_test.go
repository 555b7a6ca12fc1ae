package bridge

import (
	"math"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// boostRaceInner is an inner priority queue whose step boost (an add with priority math.MaxInt) waits until
// beforeBoost returns: the test lets a worker take the key first, as happens when a worker wakes on the step's
// broadcast and wins the race against the step's own add.
type boostRaceInner struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	beforeBoost func()
}

func (b *boostRaceInner) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	if o.Priority != nil && *o.Priority == math.MaxInt && b.beforeBoost != nil {
		f := b.beforeBoost
		b.beforeBoost = nil
		f()
	}
	b.PriorityQueue.AddWithOpts(o, items...)
}

// TestStepBoostNeverLeaks: a step of a ready key whose worker takes the key before the step's boost lands leaves
// the boost (math.MaxInt) in the inner queue for the key's next hand-out. That hand-out (after resume) reports
// and returns the key's own priority, never the boost: priority 9223372036854775807 is no JSON int the editor
// takes ("transitions.items[0]: priority must be an int or null", seen in `reconcile-lab check --go`'s
// stale-cache runs: the transition was skipped), and the controller would see it too.
func TestStepBoostNeverLeaks(t *testing.T) {
	q, h := testQueue(t, true)
	k := req("k")
	handed := make(chan int, 4)
	release := make(chan struct{}, 4)
	q.inner = &boostRaceInner{PriorityQueue: q.inner, beforeBoost: func() { <-handed }}
	q.Pause()
	go func() {
		for {
			key, p, shutdown := q.GetWithPriority()
			if shutdown {
				return
			}
			handed <- p
			<-release
			q.Done(key)
		}
	}()
	eventually(t, "a paused worker", func() bool { return gateWaiters(q) == 1 })
	q.Add(k)
	replies := make(chan ReplyMsg, 1)
	q.Step(k, true, false, 1, func(r ReplyMsg) { replies <- r })
	release <- struct{}{}
	if r := <-replies; !r.OK {
		t.Fatalf("step reply %+v", r)
	}
	q.Resume()
	p := <-handed
	release <- struct{}{}
	if p == math.MaxInt {
		t.Error("the step's boost math.MaxInt reached the controller at the key's next hand-out")
	}
	for _, m := range queueMsgs(h) {
		if m.Priority != nil && *m.Priority >= math.MaxInt32 {
			t.Errorf("%s of %s reported with priority %d (the step's boost), want the key's own", m.Transition, m.Key, *m.Priority)
		}
	}
}
