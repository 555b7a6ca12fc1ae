package bridge

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// TestControllerOrder: each controller's announcement carries its place in the program — the order of the
// bridge.Options / bridge.NewQueue calls, which is the order the program sets its controllers up — whatever order
// the manager (which starts its controllers in parallel) announces them in. The editor follows the lowest place
// by default, so a program with several controllers is followed the same way on every run.
func TestControllerOrder(t *testing.T) {
	s := onAPIServer(t, true)
	e, h, mgr := s.e, s.h, s.mgr
	nop := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil })

	// 1: the builder, default name; 2: controller.New with its own name; 3: a queue from bridge.NewQueue (no name).
	s.configMapController(t, controller.Options{}, nop)
	c, err := controller.New("lamp-keeper", mgr, optionsFor(h, mgr, "lamp-keeper", controller.Options{Reconciler: nop}))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Watch(source.Kind(mgr.GetCache(), &corev1.Secret{}, &handler.TypedEnqueueRequestForObject[*corev1.Secret]{})); err != nil {
		t.Fatal(err)
	}
	manual, err := controller.New("manual", mgr, controller.Options{Reconciler: nop, NewQueue: h.newQueueFunc(true, ControllerMsg{Order: h.declare()}, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if err := manual.Watch(source.Kind(mgr.GetCache(), &corev1.ServiceAccount{}, &handler.TypedEnqueueRequestForObject[*corev1.ServiceAccount]{})); err != nil {
		t.Fatal(err)
	}
	if o := h.noteOptions("configmap"); o != 1 {
		t.Fatalf("a name given to bridge.Options again got place %d, want its first place 1", o)
	}
	startManager(t, mgr)

	want := map[string]float64{"configmap": 1, "lamp-keeper": 2, "manual": 3}
	got := map[string]float64{}
	for len(got) < len(want) {
		m := e.next(func(m map[string]any) bool { return m["type"] == "controller" })
		name, _ := m["name"].(string)
		order, _ := m["order"].(float64)
		got[name] = order
		// Every controller was set up before the manager started any: each announcement counts all three, so the
		// editor knows when no other is coming (a --controller naming none of them fails at once).
		if d, _ := m["declared"].(float64); d != 3 {
			t.Fatalf("%s announced declared=%v, want 3", name, m["declared"])
		}
		if _, said := m["noSetup"]; said {
			t.Fatalf("%s announced noSetup though the manager was made with bridge.Setup's options", name)
		}
	}
	for name, o := range want {
		if got[name] != o {
			t.Fatalf("announced places %v, want %v (the order of the program's bridge.Options / NewQueue calls)", got, want)
		}
	}
}

// TestNoSetupAnnounced: a controller of a manager made without bridge.Setup's options (its client is not the bridge
// client) is announced with noSetup, so the editor says its writes are not journaled.
func TestNoSetupAnnounced(t *testing.T) {
	plain := realClient(t)
	ns := scratchNamespace(t, plain)
	e := newTestEditor(t, true)
	h := connectedHub(t, e)
	mgr, err := manager.New(realConfig(t), testManagerOptions(ns)) // no setupWith: the stock client
	if err != nil {
		t.Fatal(err)
	}
	nop := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil })
	if err := builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).
		WithOptions(optionsFor(h, mgr, "configmap", controller.Options{})).
		Complete(wrapTyped(h, mgr, "configmap", nop, &corev1.ConfigMap{})); err != nil {
		t.Fatal(err)
	}
	startManager(t, mgr)
	m := e.next(func(m map[string]any) bool { return m["type"] == "controller" })
	if m["noSetup"] != true {
		t.Fatalf("announced %v, want noSetup: true", m)
	}
}
