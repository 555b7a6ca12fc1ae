package bridge

import (
	"context"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// countingWarnings is a program's own warning handler: it must still get every warning.
type countingWarnings struct {
	mu    sync.Mutex
	texts []string
}

func (c *countingWarnings) HandleWarningHeaderWithContext(_ context.Context, _ int, _, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.texts = append(c.texts, text)
}

// TestWriteWarningsJournaled: a write the server warns about (an unknown field it drops) is journaled with the
// warning; a write it has nothing to say about has none; the program's own warning handler still gets every
// warning, and the config it passed is not modified.
func TestWriteWarningsJournaled(t *testing.T) {
	cfg := realConfig(t)
	own := &countingWarnings{}
	cfg.WarningHandlerWithContext = own
	routed := routeWarnings(cfg)
	if cfg.WarningHandlerWithContext != own {
		t.Fatal("routeWarnings modified the program's config")
	}
	plain, err := client.NewWithWatch(routed, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns := scratchNamespace(t, plain)
	e := newTestEditor(t, false)
	c := newClient(connectedHub(t, e), plain)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "warned", "namespace": ns},
		"data":     map[string]any{"a": "1"},
		"colour":   "red", // not a ConfigMap field: the server drops it and says so
	}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	w := nextWrite(t, e)
	if len(w.Warnings) != 1 || w.Warnings[0] != `unknown field "colour"` {
		t.Fatalf("create journaled with warnings %q, want [unknown field \"colour\"] (the program's handler got %q)", w.Warnings, own.texts)
	}
	own.mu.Lock()
	got := append([]string(nil), own.texts...)
	own.mu.Unlock()
	if len(got) != 1 || got[0] != `unknown field "colour"` {
		t.Fatalf("the program's own handler got %q, want the warning too", got)
	}

	clean := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "clean", "namespace": ns}}}
	if err := c.Create(ctx, clean); err != nil {
		t.Fatal(err)
	}
	if w := nextWrite(t, e); w.Warnings != nil {
		t.Fatalf("a write without warnings was journaled with %q", w.Warnings)
	}
}

// TestRouteWarningsKeepsTheDefault: without a handler of the program's, warnings still go to controller-runtime's
// default logger (as client.New would have set), and a legacy WarningHandler is still called.
func TestRouteWarningsKeepsTheDefault(t *testing.T) {
	r, ok := routeWarnings(&rest.Config{}).WarningHandlerWithContext.(warningRouter)
	if !ok || r.next == nil {
		t.Fatalf("no router with a next handler: %#v", r)
	}
	ctx, sink := withWarningSink(context.Background())
	r.HandleWarningHeaderWithContext(ctx, 299, "-", `unknown field "x"`)
	r.HandleWarningHeaderWithContext(ctx, 299, "-", `unknown field "x"`)
	r.HandleWarningHeaderWithContext(ctx, 199, "-", "not persistent")
	r.HandleWarningHeaderWithContext(context.Background(), 299, "-", "no sink: only logged")
	if got := sink.texts(); len(got) != 1 || got[0] != `unknown field "x"` {
		t.Fatalf("sink has %q, want one code-299 warning without duplicates", got)
	}
	legacy := &legacyCounter{}
	routed := routeWarnings(&rest.Config{WarningHandler: legacy})
	if routed.WarningHandler != nil {
		t.Fatal("the legacy handler is still set beside the router (client-go would call only one)")
	}
	routed.WarningHandlerWithContext.HandleWarningHeaderWithContext(context.Background(), 299, "-", "deprecated")
	if legacy.n != 1 {
		t.Fatalf("the program's legacy WarningHandler was called %d times, want 1", legacy.n)
	}
}

type legacyCounter struct{ n int }

func (l *legacyCounter) HandleWarningHeader(int, string, string) { l.n++ }
