package bridge

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// kettleShelf is the user's helper the reconciler calls; it panics (a write to a nil map, a runtime error).
func kettleShelf(name string) {
	var shelves map[string]int
	shelves[name]++
}

// TestPanicReportsTheUsersFrames: a Reconcile that panics in a helper (controller-runtime recovers it and retries
// the key) is reported with the panic value and the user's frames — the helper where it panicked and the Reconcile
// that called it, each with its file:line — not the stack capture, the bridge's recover, the runtime's panic
// machinery or the controller-runtime frames below (about 30 lines of which nothing is the user's); a dry run's
// panic too.
func TestPanicReportsTheUsersFrames(t *testing.T) {
	s := onAPIServer(t, true)
	plain, ns, e, h, mgr := s.plain, s.ns, s.e, s.h, s.mgr
	rec := reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
		kettleShelf(req.Name)
		return reconcile.Result{}, nil
	})
	s.configMapController(t, controller.Options{}, rec)
	startManager(t, mgr)
	e.next(func(m map[string]any) bool { return m["type"] == "controller" })
	if err := plain.Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "copper"}}); err != nil {
		t.Fatal(err)
	}
	key := ns + "/copper"
	e.next(func(m map[string]any) bool {
		return m["type"] == "queue" && m["transition"] == "added" && m["key"] == key
	})

	var end map[string]any
	commandAndWaitCollect(t, e, h, CommandMsg{ID: 1, Op: OpStep, Controller: "configmap", Key: key}, func(m map[string]any) {
		if m["type"] == "reconcileEnd" {
			end = m
		}
	})
	if end == nil {
		t.Fatal("no reconcileEnd for the step")
	}
	checkPanicReport(t, "step", end["panic"])

	dry := commandAndWait(t, e, h, CommandMsg{ID: 2, Op: OpDryRun, Controller: "configmap", Key: key})
	rc, _ := dry["reconcile"].(map[string]any)
	checkPanicReport(t, "dry run", rc["panic"])
}

func checkPanicReport(t *testing.T, what string, v any) {
	t.Helper()
	report, _ := v.(string)
	lines := strings.Split(report, "\n")
	if lines[0] != "assignment to entry in nil map" {
		t.Fatalf("%s: the report starts %q, want the panic value:\n%s", what, lines[0], report)
	}
	want := []string{
		"github.com/reconcile-lab/reconcile-lab/bridge.kettleShelf(...)", "panic_test.go:",
		"github.com/reconcile-lab/reconcile-lab/bridge.TestPanicReportsTheUsersFrames.func1(...)", "panic_test.go:",
	}
	if len(lines) != 1+len(want) {
		t.Fatalf("%s: %d lines, want the value and two frames of two lines:\n%s", what, len(lines), report)
	}
	for i, w := range want {
		if !strings.Contains(lines[1+i], w) {
			t.Fatalf("%s: line %d is %q, want it to hold %q:\n%s", what, 2+i, lines[1+i], w, report)
		}
	}
	for _, noise := range []string{"runtime/debug", "goroutine ", "panic(", "+0x", "controller-runtime", "(*Reconciler)"} {
		if strings.Contains(report, noise) {
			t.Fatalf("%s: the report holds %q:\n%s", what, noise, report)
		}
	}
}
