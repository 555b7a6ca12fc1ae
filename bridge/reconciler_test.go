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
// start, the write, the end, the backoff its error causes and the Done (in the order the queue makes them) — whenever the writer takes a burst. (Sent
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
	var last uint64
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
			}
			if b.recs[i].seq < last {
				seen = append(seen, "out of sequence")
			}
			last = b.recs[i].seq
		}
		return len(seen) >= 7
	})
	// The priority queue computes the backoff only after Done; client-go's queue at AddRateLimited.
	want := "[added processing start write update end: the dependency is not there yet backoff done]"
	if pq {
		want = "[added processing start write update end: the dependency is not there yet done backoff]"
	}
	if fmt.Sprint(seen) != want {
		t.Fatalf("order:\n got %v\nwant %s", seen, want)
	}
}
