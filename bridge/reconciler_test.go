package bridge

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestReconcileMessagesKeepTheQueuesOrder: a reconcile's start, its writes and its end travel in its queue's
// spool, so the editor reads them in the order they happened among the queue's transitions — the hand-out, the
// start, the write, the end, then the backoff its error causes and the Done (in the order the queue makes them:
// either, with the priority queue) — whenever the writer takes a burst. (Sent
// through the hub's own spool, an end could be read after its backoff: the writer takes each spool in turn, and a
// take between the two spools split them; the editor then held the end back waiting for a backoff it had already
// read, and journaled it only at the key's next reconcile.)
func TestReconcileMessagesKeepTheQueuesOrder(t *testing.T) {
	for _, pq := range []bool{true, false} {
		t.Run(fmt.Sprintf("priorityQueue=%v", pq), func(t *testing.T) { reconcileMessagesInOrder(t, pq) })
	}
}

func reconcileMessagesInOrder(t *testing.T, pq bool) {
	h := newHub("", "", nil)
	item := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "bench", Name: "widget-config"}}
	q := newQueue(queueConfig{name: "order", priorityQueue: pq, hub: h})
	t.Cleanup(q.ShutDown)
	c := newClient(h, newMemClient(item.NamespacedName))
	inner := &configMapReconciler{client: c}
	r := newReconciler(h, "order", reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		if _, err := inner.Reconcile(ctx, req); err != nil {
			return reconcile.Result{}, err
		}
		return reconcile.Result{}, errors.New("the dependency is not there yet")
	}))
	h.box.take(burst{}) // the announcement

	q.Add(item)
	got, _ := q.Get()
	if _, err := r.Reconcile(context.Background(), got); err == nil {
		t.Fatal("the reconcile should fail")
	}
	h.box.mu.Lock()
	own := len(h.box.own.buf)
	h.box.mu.Unlock()
	if own != 0 {
		t.Fatalf("%d message(s) of the reconcile in the hub's own spool: a take could split them from the queue's transitions", own)
	}
	// What a worker does after Reconcile returned an error (controller-runtime's reconcileHandler).
	q.AddRateLimited(got)
	q.Done(got)

	var seen []string
	var seqs []uint64
	eventually(t, "the reconcile and its backoff reported", func() bool {
		b := h.box.take(burst{})
		for i := range b.recs {
			switch m := b.recs[i].message(b.causes).(type) {
			case *QueueMsg:
				seen = append(seen, m.Transition)
			case *ReconcileStartMsg:
				seen = append(seen, "start")
			case *WriteMsg:
				seen = append(seen, "write "+m.Write.Verb)
			case *ReconcileEndMsg:
				seen = append(seen, "end: "+m.Error)
			default:
				continue
			}
			seqs = append(seqs, b.recs[i].seq)
		}
		return len(seen) >= 7
	})
	// client-go's queue computes the backoff at AddRateLimited, before Done. The priority queue computes it on its
	// own goroutine (its add buffer), which may run before or after Done: either order is right, and those two
	// come from different goroutines at once (a hot op and a push: their numbers may be in either order, see
	// outbox.go). What must hold is that the reconcile's messages come before both, in sequence.
	want := "[added processing start write update end: the dependency is not there yet backoff done]"
	// The backoff may have passed by the last take (a real clock): its "ready" is no part of this.
	seen, seqs = seen[:7], seqs[:7]
	order := fmt.Sprint(seen)
	if pq && len(seen) == 7 && seen[5] == "done" && seen[6] == "backoff" {
		order = fmt.Sprint(append(seen[:5:5], "backoff", "done"))
	}
	if order != want {
		t.Fatalf("order:\n got %v\nwant %s (done and backoff in either order with the priority queue)", seen, want)
	}
	for i := 1; i < 6; i++ {
		if seqs[i] < seqs[i-1] {
			t.Fatalf("%q (seq %d) after %q (seq %d): out of sequence", seen[i], seqs[i], seen[i-1], seqs[i-1])
		}
	}
	if seqs[6] < seqs[4] {
		t.Fatalf("the backoff and the done (seq %d, %d) numbered before the end (seq %d)", seqs[5], seqs[6], seqs[4])
	}
}
