package bridge

import (
	"context"
	"os"
	"reflect"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestDisabledReturnsStock: with RECONCILE_LAB_BRIDGE unset every factory returns its argument or nil (so
// controller-runtime builds its stock queue, client and cache): zero change in behaviour.
func TestDisabledReturnsStock(t *testing.T) {
	if os.Getenv(EnvAddress) != "" {
		t.Skip(EnvAddress + " is set in this process")
	}
	if Enabled() {
		t.Fatal("Enabled() without " + EnvAddress)
	}
	var o manager.Options
	Setup(&o)
	if o.NewClient != nil || o.NewCache != nil {
		t.Fatal("Setup changed the manager options")
	}
	opts := controller.Options{MaxConcurrentReconciles: 3}
	if got := Options(nil, "x", opts); !reflect.DeepEqual(got.MaxConcurrentReconciles, 3) || got.NewQueue != nil {
		t.Fatalf("Options changed the controller options: %+v", got)
	}
	if NewQueue(true) != nil || NewQueue(false) != nil {
		t.Fatal("NewQueue returned a queue factory")
	}
	r := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil })
	if got := Wrap(nil, "x", r); reflect.ValueOf(got).Pointer() != reflect.ValueOf(r).Pointer() {
		t.Fatal("Wrap wrapped the reconciler")
	}
	// A custom request type: the same, typed.
	type clusterReq struct {
		Cluster string
		reconcile.Request
	}
	topts := controller.TypedOptions[clusterReq]{MaxConcurrentReconciles: 2}
	if got := Options(nil, "x", topts); got.MaxConcurrentReconciles != 2 || got.NewQueue != nil {
		t.Fatalf("Options changed the typed controller options: %+v", got)
	}
	tr := reconcile.TypedFunc[clusterReq](func(context.Context, clusterReq) (reconcile.Result, error) { return reconcile.Result{}, nil })
	if got := WrapTyped[clusterReq](nil, "x", tr); reflect.ValueOf(got).Pointer() != reflect.ValueOf(tr).Pointer() {
		t.Fatal("WrapTyped wrapped the reconciler")
	}
	if IsDryRun(context.Background()) {
		t.Fatal("IsDryRun outside a dry run")
	}
}
