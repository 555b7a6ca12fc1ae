package bridge

import (
	"context"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestPauseAndStepWithWorkersBusy: a controller with MaxConcurrentReconciles 3 and five keys. Three reconciles are
// in flight (held by the test) when the editor pauses: they finish, and nothing else starts — the two other keys
// stay queued — until a step without key hands out exactly one of them; a step of the other key by name hands out
// that one. A step of a key that is being reconciled right now (not paused) waits for the reconcile that follows it
// and answers with that one.
func TestPauseAndStepWithWorkersBusy(t *testing.T) {
	s := onAPIServer(t, false)
	plain, ns, e, h, mgr := s.plain, s.ns, s.e, s.h, s.mgr
	var mu sync.Mutex
	gates := map[string]chan struct{}{}
	gate := func(name string) chan struct{} {
		mu.Lock()
		defer mu.Unlock()
		if gates[name] == nil {
			gates[name] = make(chan struct{})
		}
		return gates[name]
	}
	rec := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		if strings.HasPrefix(req.Name, "slow-") {
			select {
			case <-gate(req.Name):
			case <-ctx.Done():
			}
		}
		return reconcile.Result{}, nil
	})
	s.configMapController(t, controller.Options{MaxConcurrentReconciles: 3}, rec)
	startManager(t, mgr)
	e.next(func(m map[string]any) bool { return m["type"] == "controller" })
	for _, name := range []string{"slow-1", "slow-2", "slow-3"} {
		if err := plain.Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	started := map[string]bool{}
	for len(started) < 3 {
		m := e.next(func(m map[string]any) bool { return m["type"] == "reconcileStart" })
		started[m["key"].(string)] = true
	}
	// Every worker is busy: the next keys are queued, not handed out.
	for _, name := range []string{"fast-1", "fast-2"} {
		if err := plain.Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
			t.Fatal(err)
		}
		e.next(func(m map[string]any) bool {
			return m["type"] == "queue" && m["transition"] == "added" && m["key"] == ns+"/"+name
		})
	}
	if r := commandAndWait(t, e, h, CommandMsg{ID: 1, Op: OpPause, Controller: "configmap"}); r["ok"] != true {
		t.Fatalf("pause: %v", r)
	}
	for _, name := range []string{"slow-1", "slow-2", "slow-3"} {
		close(gate(name))
	}
	ends := 0
	for ends < 3 {
		m := e.next(func(m map[string]any) bool { return m["type"] == "reconcileStart" || m["type"] == "reconcileEnd" })
		if m["type"] == "reconcileStart" {
			t.Fatalf("%v started while paused", m["key"])
		}
		ends++
	}
	// A step without key: exactly one of the two queued keys, and no other start before its reply.
	var starts []string
	r := commandAndWaitCollect(t, e, h, CommandMsg{ID: 2, Op: OpStep, Controller: "configmap"}, func(m map[string]any) {
		if m["type"] == "reconcileStart" {
			starts = append(starts, m["key"].(string))
		}
	})
	if r["ok"] != true || len(starts) != 1 || !strings.HasPrefix(starts[0], ns+"/fast-") {
		t.Fatalf("step without key: reply %v after starts %v; want one fast key", r, starts)
	}
	other := ns + "/fast-1"
	if starts[0] == other {
		other = ns + "/fast-2"
	}
	starts = nil
	r = commandAndWaitCollect(t, e, h, CommandMsg{ID: 3, Op: OpStep, Controller: "configmap", Key: other}, func(m map[string]any) {
		if m["type"] == "reconcileStart" {
			starts = append(starts, m["key"].(string))
		}
	})
	if r["ok"] != true || len(starts) != 1 || starts[0] != other {
		t.Fatalf("step of %s: reply %v after starts %v", other, r, starts)
	}

	// Resumed, a key in flight: a step of it answers with the reconcile after the one in flight.
	if r := commandAndWait(t, e, h, CommandMsg{ID: 4, Op: OpResume, Controller: "configmap"}); r["ok"] != true {
		t.Fatalf("resume: %v", r)
	}
	mu.Lock()
	gates["slow-4"] = make(chan struct{})
	mu.Unlock()
	if err := plain.Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "slow-4"}}); err != nil {
		t.Fatal(err)
	}
	first := e.next(func(m map[string]any) bool { return m["type"] == "reconcileStart" && m["key"] == ns+"/slow-4" })
	var ids []string
	h.handle(CommandMsg{ID: 5, Op: OpStep, Controller: "configmap", Key: ns + "/slow-4"})
	close(gate("slow-4")) // the reconcile in flight ends; the one the step asked for passes the closed gate
	reply := e.next(func(m map[string]any) bool {
		if m["type"] == "reconcileStart" && m["key"] == ns+"/slow-4" {
			ids = append(ids, m["reconcileID"].(string))
		}
		return m["type"] == "reply" && m["id"] == float64(5)
	})
	if reply["ok"] != true || len(ids) != 1 || ids[0] == first["reconcileID"] {
		t.Fatalf("step of a key in flight: reply %v, reconciles started before it %v (the one in flight: %v)", reply, ids, first["reconcileID"])
	}
}
