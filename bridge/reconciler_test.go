package bridge

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
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

// TestWrappedUnderAnotherName: a controller whose bridge.Wrap got a name controller-runtime did not give it is
// still shown whole under controller-runtime's name — its announcement names the kind Wrap was given, its
// reconciles report under that name, and a step and a dry-run sent for that name reach its reconciler. Both slips:
// Named("bucket-ctrl") with "bucket" in both calls, and the right name in Options with "bucket" in Wrap.
func TestWrappedUnderAnotherName(t *testing.T) {
	for _, optionsName := range []string{"bucket", "bucket-ctrl"} {
		t.Run("Options "+optionsName, func(t *testing.T) { wrappedUnderAnotherName(t, optionsName) })
	}
}

func wrappedUnderAnotherName(t *testing.T, optionsName string) {
	s := onAPIServer(t, true)
	plain, ns, e, h, mgr := s.plain, s.ns, s.e, s.h, s.mgr
	c := mgr.GetClient()
	rec := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		var cm corev1.ConfigMap
		if err := c.Get(ctx, req.NamespacedName, &cm); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		if cm.Data["seen"] == "yes" {
			return reconcile.Result{}, nil
		}
		cm.Data = map[string]string{"seen": "yes"}
		return reconcile.Result{}, c.Update(ctx, &cm)
	})
	w := newReconciler(h, "bucket", rec)
	w.describeFor(mgr, []client.Object{&corev1.ConfigMap{}})
	err := builder.ControllerManagedBy(mgr).
		For(&corev1.ConfigMap{}).
		Named("bucket-ctrl").
		WithOptions(optionsFor(h, mgr, optionsName, controller.Options{})).
		Complete(w)
	if err != nil {
		t.Fatal(err)
	}
	startManager(t, mgr)
	announced := e.next(func(m map[string]any) bool { return m["type"] == "controller" })
	if announced["name"] != "bucket-ctrl" || announced["kind"] != "ConfigMap" || announced["resource"] != "configmaps" {
		t.Fatalf("announcement %v: want controller-runtime's name bucket-ctrl with the kind Wrap was given", announced)
	}
	// The slip is told to the editor too (not only in the program's log), with the name to pass.
	hints := hintsOf(announced)
	if optionsName == "bucket" {
		// Options and Wrap both say "bucket": Options' name is not controller-runtime's (Wrap follows it).
		if len(hints) != 1 || !strings.Contains(hints[0], `bridge.Options(mgr, "bucket", …)`) || !strings.Contains(hints[0], `pass "bucket-ctrl" to bridge.Options and bridge.Wrap`) {
			t.Fatalf("hints %q: want the Options name mismatch", hints)
		}
	} else if len(hints) != 1 || !strings.Contains(hints[0], `bridge.Wrap(mgr, "bucket", …) and bridge.Options(mgr, "bucket-ctrl", …) name one controller differently`) {
		t.Fatalf("hints %q: want the Wrap/Options pair", hints)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "photos"}}
	if err := plain.Create(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	key := ns + "/photos"
	e.next(func(m map[string]any) bool {
		return m["type"] == "queue" && m["transition"] == "added" && m["key"] == key
	})

	dry := commandAndWait(t, e, h, CommandMsg{ID: 1, Op: OpDryRun, Controller: "bucket-ctrl", Key: key})
	if dry["ok"] != true {
		t.Fatalf("dry run for controller-runtime's name: %v", dry)
	}
	var ends []map[string]any
	step := commandAndWaitCollect(t, e, h, CommandMsg{ID: 2, Op: OpStep, Controller: "bucket-ctrl", Key: key}, func(m map[string]any) {
		if m["type"] == "reconcileStart" || m["type"] == "reconcileEnd" {
			ends = append(ends, m)
		}
	})
	if step["ok"] != true {
		t.Fatalf("step for controller-runtime's name: %v", step)
	}
	if len(ends) != 2 || ends[0]["controller"] != "bucket-ctrl" || ends[1]["controller"] != "bucket-ctrl" || ends[1]["key"] != key || ends[1]["error"] != nil {
		t.Fatalf("the step's reconcile start and end %v: want both under bucket-ctrl, for %s, without error", ends, key)
	}
	var after corev1.ConfigMap
	if err := plain.Get(context.Background(), client.ObjectKeyFromObject(cm), &after); err != nil || after.Data["seen"] != "yes" {
		t.Fatalf("after the step the ConfigMap holds %v (%v)", after.Data, err)
	}
}

// hintsOf is the hints of a controller message as the editor decodes them.
func hintsOf(m map[string]any) []string {
	var out []string
	raw, _ := m["hints"].([]any)
	for _, h := range raw {
		s, _ := h.(string)
		out = append(out, s)
	}
	return out
}

// commandAndWait sends c to the hub and returns its reply.
func commandAndWait(t *testing.T, e *testEditor, h *hub, c CommandMsg) map[string]any {
	t.Helper()
	return commandAndWaitCollect(t, e, h, c, func(map[string]any) {})
}

// commandAndWaitCollect is commandAndWait that hands every message read before the reply to seen.
func commandAndWaitCollect(t *testing.T, e *testEditor, h *hub, c CommandMsg, seen func(map[string]any)) map[string]any {
	t.Helper()
	h.handle(c)
	return e.next(func(m map[string]any) bool {
		seen(m)
		return m["type"] == "reply" && m["id"] == float64(c.ID)
	})
}

// TestWrongGuessUndone: a manager with one controller bridged only at its queue ("lamps": bridge.Options, its
// reconciler not wrapped) and another only at its reconciler ("keys": bridge.Wrap, controller-runtime's own queue)
// looks like one controller whose Wrap got another name. The pair is guessed at the queue's announcement and
// undone at the wrapped reconciler's first reconcile, which is not one of that queue's: the reconcile is reported
// under its own name and the queue is announced again without the other controller's kind.
func TestWrongGuessUndone(t *testing.T) {
	s := onAPIServer(t, false)
	plain, ns, e, h, mgr := s.plain, s.ns, s.e, s.h, s.mgr
	nothing := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil })
	if err := builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Named("lamps").
		WithOptions(optionsFor(h, mgr, "lamps", controller.Options{})).Complete(nothing); err != nil {
		t.Fatal(err)
	}
	w := newReconciler(h, "keys", nothing)
	w.describeFor(mgr, []client.Object{&corev1.Secret{}})
	if err := builder.ControllerManagedBy(mgr).For(&corev1.Secret{}).Named("keys").Complete(w); err != nil {
		t.Fatal(err)
	}
	startManager(t, mgr)
	guessed := e.next(func(m map[string]any) bool { return m["type"] == "controller" && m["name"] == "lamps" })
	if guessed["kind"] != "Secret" {
		t.Fatalf("announcement %v: the lone Wrap should be guessed as lamps' reconciler first", guessed)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "spare"}}
	if err := plain.Create(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	key := ns + "/spare"
	var again, start map[string]any
	for again == nil || start == nil {
		m := e.next(func(m map[string]any) bool {
			return (m["type"] == "controller" && m["name"] == "lamps") || (m["type"] == "reconcileStart" && m["key"] == key)
		})
		if m["type"] == "controller" {
			again = m
		} else {
			start = m
		}
	}
	if again["kind"] != nil || again["resource"] != nil {
		t.Fatalf("lamps announced again %v: want no kind once the guess is undone", again)
	}
	// The first announcement told the guess; the second repeats it and adds that it was undone.
	if h := hintsOf(guessed); len(h) != 1 || !strings.Contains(h[0], "name one controller differently") {
		t.Fatalf("first announcement's hints %q: want the guessed pair", h)
	}
	if h := hintsOf(again); len(h) != 2 || !strings.Contains(h[1], `bridge.Wrap(mgr, "keys", …) is not the reconciler of controller "lamps" after all`) {
		t.Fatalf("second announcement's hints %q: want the pair undone after the guess", h)
	}
	if start["controller"] != "keys" {
		t.Fatalf("the Secret's reconcile %v: want it under its own controller keys", start)
	}
}

// TestEndKeepsTheResultBesideAnError: a Reconcile that returns RequeueAfter together with an error is reported with
// both (controller-runtime drops the Result then; the editor says so), a terminal error too.
func TestEndKeepsTheResultBesideAnError(t *testing.T) {
	h := newHub("", "", nil)
	r := newReconciler(h, "kettle", reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		return reconcile.Result{}, nil
	}))
	end := r.endMsg("kettle", "ns/k", "id", h.clock.Now(), reconcile.Result{RequeueAfter: 30 * time.Second}, errors.New("not hot yet"), false)
	if end.Error != "not hot yet" || end.Result == nil || end.Result.RequeueAfterMs != 30000 || end.Terminal {
		t.Fatalf("end %+v (result %+v): want the error and RequeueAfterMs 30000", end, end.Result)
	}
	end = r.endMsg("kettle", "ns/k", "id", h.clock.Now(), reconcile.Result{Requeue: true}, reconcile.TerminalError(errors.New("bad spec")), false) //nolint:staticcheck // Requeue is still honoured
	if !end.Terminal || end.Result == nil || !end.Result.Requeue {
		t.Fatalf("end %+v (result %+v): want a terminal error with Requeue", end, end.Result)
	}
}
