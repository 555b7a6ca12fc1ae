package bridge

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// TestOpLogFullRingLosesNothing: with nobody folding (no hub, so no writer), more hot ops than the ring holds
// are all applied: the producer that finds the ring full folds it itself.
func TestOpLogFullRingLosesNothing(t *testing.T) {
	q := newQueue(queueConfig{name: "full"})
	t.Cleanup(q.ShutDown)
	n := opLogSize + opLogSize/2
	for i := range n {
		q.Add(req(fmt.Sprint("k", i)))
	}
	snap := q.Snapshot()
	keys := snap["keys"].([]map[string]any)
	ready := 0
	for _, k := range keys {
		if k["state"] == "ready" && len(k["causes"].([]Cause)) == 1 {
			ready++
		}
	}
	if ready != n {
		t.Fatalf("%d keys ready with their cause after %d adds through a ring of %d", ready, n, opLogSize)
	}
	k, _ := q.Get()
	q.Done(k)
	if got := q.Len(); got != n-1 {
		t.Fatalf("Len %d, want %d", got, n-1)
	}
}

// TestHotOpsRaceWithPauseAndTakes: producers and workers on the hot path while the editor pauses and resumes and
// a writer takes bursts concurrently, with backoffs (rate-limited adds: the priority queue runs the rate limiter,
// and so the bridge's onBackoff and its fold, under its own lock) — run it with -race. Every hand-out a worker
// saw is reported exactly once, in order per key (processing, then done, never processing twice without a done),
// every key ends idle, nothing is dropped, and nothing deadlocks.
func TestHotOpsRaceWithPauseAndTakes(t *testing.T) {
	for _, pq := range []bool{false, true} {
		t.Run(fmt.Sprintf("priorityQueue=%v", pq), func(t *testing.T) { hotOpsRace(t, pq) })
	}
}

func hotOpsRace(t *testing.T, pq bool) {
	h := newHub("", "", nil)
	q := newQueue(queueConfig{name: "race", hub: h, priorityQueue: pq})
	var recs []string
	var mu sync.Mutex
	stopTaking := make(chan struct{})
	taken := make(chan struct{})
	go func() { // the writer
		defer close(taken)
		for {
			select {
			case <-stopTaking:
				return
			default:
			}
			b := h.box.take(burst{})
			mu.Lock()
			for _, r := range b.recs {
				if m, ok := r.message(b.causes).(*QueueMsg); ok {
					recs = append(recs, m.Key+" "+m.Transition)
				}
			}
			mu.Unlock()
		}
	}()

	const producers, workers, perProducer = 2, 4, 3000
	var handedOut atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k, shutdown := q.Get()
				if shutdown {
					return
				}
				n := handedOut.Add(1)
				if n%7 == 0 {
					q.AddRateLimited(k) // a failed reconcile: retried after 5 ms (the failures are forgotten below)
				}
				if w%2 == 0 || n%7 == 0 {
					q.Forget(k)
				}
				q.Done(k)
			}
		}()
	}
	var pwg sync.WaitGroup
	for p := range producers {
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			for i := range perProducer {
				q.Add(req(fmt.Sprintf("p%d-%d", p, i%300)))
			}
		}()
	}
	for range 20 {
		q.Pause()
		q.Resume()
	}
	pwg.Wait()
	eventually(t, "queue drained", func() bool { return q.Len() == 0 && allIdle(q) })
	q.ShutDown()
	wg.Wait()
	close(stopTaking)
	<-taken
	b := h.box.take(burst{})
	for _, r := range b.recs {
		if m, ok := r.message(b.causes).(*QueueMsg); ok {
			recs = append(recs, m.Key+" "+m.Transition)
		}
	}

	state := map[string]string{}
	processing := 0
	for _, r := range recs {
		var key, tr string
		fmt.Sscan(r, &key, &tr)
		switch tr {
		case "processing":
			if state[key] == "processing" {
				t.Fatalf("%s handed out twice without a done", key)
			}
			state[key] = "processing"
			processing++
		case "done":
			if state[key] != "processing" {
				t.Fatalf("%s done while %q", key, state[key])
			}
			state[key] = "done"
		}
	}
	if int64(processing) != handedOut.Load() {
		t.Fatalf("%d processing transitions reported, workers were handed %d keys", processing, handedOut.Load())
	}
	if h.box.dropped.Load() != 0 {
		t.Fatalf("%d records dropped", h.box.dropped.Load())
	}
}

// allIdle reports whether no key is queued or processing (the log folded first).
func allIdle(q *Queue) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.lockedFold()
	for _, ks := range q.keys {
		if ks.queued != notQueued || ks.processing {
			return false
		}
	}
	return true
}

// TestWriterFoldStopsAtFullSpool: the writer's fold leaves ops in the log while the queue's spool is full, so a
// writer that takes bursts smaller than the log loses nothing; only a producer that finds the log full with no
// writer to yield to folds past the bound, and exactly what does not fit is dropped and counted.
func TestWriterFoldStopsAtFullSpool(t *testing.T) {
	h := newHub("", "", nil) // no connection: no writer runs; the test takes the bursts
	const limit = 64
	h.box.limit = limit
	q := newQueue(queueConfig{name: "bounded", hub: h})
	t.Cleanup(q.ShutDown)
	takeAll := func() (n int) {
		var b burst
		for {
			b = h.box.take(b)
			if len(b.recs) == 0 {
				return n
			}
			inBurst := 0
			for _, r := range b.recs {
				if r.kind != recQueue {
					continue // the controller's announcement
				}
				if inBurst++; inBurst > limit {
					t.Fatalf("a burst of more than %d transitions from a spool bounded at %d", inBurst, limit)
				}
				if r.tr != trAdded || r.key != req(fmt.Sprint("k", n)) {
					t.Fatalf("record %d: transition %d key %v", n, r.tr, r.key)
				}
				n++
			}
		}
	}
	const few = 1000 // more than the spool holds, less than the log
	for i := range few {
		q.Add(req(fmt.Sprint("k", i)))
	}
	if got := takeAll(); got != few || h.box.dropped.Load() != 0 {
		t.Fatalf("took %d of %d adds, %d dropped", got, few, h.box.dropped.Load())
	}
	// The log overflows with no writer: the producer folds it all; the spool keeps limit, the rest is counted.
	for i := range opLogSize + 100 {
		q.Add(req(fmt.Sprint("k", few+i)))
	}
	if got := h.box.dropped.Load(); got != opLogSize-limit {
		t.Fatalf("%d dropped, want %d", got, opLogSize-limit)
	}
}
