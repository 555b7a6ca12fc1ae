package widget_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/reconcile-lab/reconcile-lab/bridge"
	"github.com/reconcile-lab/reconcile-lab/bridge/bridgetest"
	"github.com/reconcile-lab/reconcile-lab/samples/go-controller/widget"
)

const wait = 30 * time.Second

// TestSampleUnderBridge runs the sample Widget controller in this process against the real local control plane
// (RECONCILE_LAB_KUBECONFIG, started by `npm test -- --only go`), connected to a protocol-speaking editor that
// welcomes it paused, and drives it the way the editor does.
func TestSampleUnderBridge(t *testing.T) {
	kubeconfig := os.Getenv("RECONCILE_LAB_KUBECONFIG")
	if kubeconfig == "" {
		t.Skip("RECONCILE_LAB_KUBECONFIG is not set: run through `npm test -- --only go`, which starts the local control plane")
	}
	logf.SetLogger(zap.New(zap.UseDevMode(true)))
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = widget.AddToScheme(scheme)
	direct, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	applyCRD(t, ctx, direct)
	ns := fmt.Sprintf("bridge-go-%d", time.Now().UnixNano()%1_000_000_000)
	if err := direct.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	defer direct.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})

	editor := bridgetest.Listen(t, true)
	t.Setenv(bridge.EnvAddress, editor.Address)
	t.Setenv(bridge.EnvToken, editor.Token)
	opts := ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"}
	bridge.Setup(&opts)
	if !bridge.Enabled() {
		t.Fatal("the bridge is not enabled with " + bridge.EnvAddress + " set")
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	r := &widget.Reconciler{Client: mgr.GetClient(), DependencyRequeue: time.Hour}
	if err := r.SetupWithManager(mgr, controller.Options{SkipNameValidation: new(true)}); err != nil {
		t.Fatal(err)
	}
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		select {
		case err := <-mgrDone:
			if err != nil {
				t.Errorf("manager: %v", err)
			}
		case <-time.After(wait):
			t.Error("the manager did not stop (paused workers must not block shutdown)")
		}
	}()
	ctrlMsg, _ := editor.WaitFor(0, wait, bridgetest.Is("controller", "name", widget.Name))
	if ctrlMsg["paused"] != true || ctrlMsg["priorityQueue"] != true || ctrlMsg["kind"] != "Widget" {
		t.Fatalf("controller announcement %v", ctrlMsg)
	}
	key := func(name string) string { return ns + "/" + name }
	countStarts := func(k string) int {
		n := 0
		for _, m := range editor.Messages() {
			if m["type"] == "reconcileStart" && m["key"] == k && m["dryRun"] == false {
				n++
			}
		}
		return n
	}
	newWidget := func(name string, data map[string]string, annotations map[string]string) *widget.Widget {
		w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: annotations}, Spec: widget.WidgetSpec{Data: data}}
		if err := direct.Create(ctx, w); err != nil {
			t.Fatal(err)
		}
		return w
	}

	t.Run("paused: queued, zero reconciles; step runs exactly one", func(t *testing.T) {
		newWidget("w1", map[string]string{"a": "1"}, nil)
		added, at := editor.WaitFor(0, wait, bridgetest.Is("queue", "key", key("w1"), "transition", "added"))
		causes, _ := added["causes"].([]any)
		if len(causes) != 1 || causes[0].(map[string]any)["kind"] != "informer" || causes[0].(map[string]any)["resource"] != "widgets.v1alpha1.lab.reconcile.dev" {
			t.Fatalf("cause of the add: %v", added)
		}
		if n := countStarts(key("w1")); n != 0 {
			t.Fatalf("%d reconciles while paused", n)
		}
		reply := editor.Command("step", widget.Name, key("w1"), false, wait)
		if !reply.OK || reply.Reconcile == nil || reply.Reconcile.Error != "" || reply.Reconcile.Key != key("w1") || reply.Reconcile.ReconcileID == "" {
			t.Fatalf("step reply %+v", reply)
		}
		if n := countStarts(key("w1")); n != 1 {
			t.Fatalf("a step ran %d reconciles", n)
		}
		var cm corev1.ConfigMap
		if err := direct.Get(ctx, types.NamespacedName{Namespace: ns, Name: "w1-config"}, &cm); err != nil || cm.Data["a"] != "1" {
			t.Fatalf("child after the step: %v %v", err, cm.Data)
		}
		// Writes were journaled with the reconcile's ID, RV before → after.
		w, _ := editor.WaitFor(at, wait, bridgetest.Is("write", "key", key("w1"), "reconcileID", reply.Reconcile.ReconcileID))
		if wr := w["write"].(map[string]any); wr["verb"] == "" || wr["resourceVersionAfter"] == nil {
			t.Fatalf("journaled write %v", w)
		}
	})

	t.Run("a spec update and an owned child's change before one Get: both causes", func(t *testing.T) {
		from := len(editor.Messages())
		var w widget.Widget
		if err := direct.Get(ctx, types.NamespacedName{Namespace: ns, Name: "w1"}, &w); err != nil {
			t.Fatal(err)
		}
		w.Spec.Data = map[string]string{"a": "2"}
		if err := direct.Update(ctx, &w); err != nil {
			t.Fatal(err)
		}
		var cm corev1.ConfigMap
		if err := direct.Get(ctx, types.NamespacedName{Namespace: ns, Name: "w1-config"}, &cm); err != nil {
			t.Fatal(err)
		}
		cm.Data = map[string]string{"a": "tampered"}
		if err := direct.Update(ctx, &cm); err != nil {
			t.Fatal(err)
		}
		// Wait until the queue attributed both events (by their resourceVersions) before stepping once.
		editor.WaitFor(from, wait, func(m map[string]any) bool {
			return m["type"] == "queue" && m["key"] == key("w1") && hasCauseRV(m, "informer", w.ResourceVersion)
		})
		editor.WaitFor(from, wait, func(m map[string]any) bool {
			return m["type"] == "queue" && m["key"] == key("w1") && hasCauseRV(m, "owned", cm.ResourceVersion)
		})
		reply := editor.Command("step", widget.Name, key("w1"), false, wait)
		if !reply.OK || reply.Reconcile == nil || reply.Reconcile.Error != "" {
			t.Fatalf("step reply %+v", reply)
		}
		start, _ := editor.WaitFor(from, wait, bridgetest.Is("reconcileStart", "reconcileID", reply.Reconcile.ReconcileID))
		if !hasCauseRV(start, "informer", w.ResourceVersion) || !hasCauseRV(start, "owned", cm.ResourceVersion) ||
			!hasCause(start, "informer", "widgets.v1alpha1.lab.reconcile.dev") || !hasCause(start, "owned", "configmaps.v1") {
			t.Fatalf("triggers of the reconcile: %v", start["triggers"])
		}
		if err := direct.Get(ctx, types.NamespacedName{Namespace: ns, Name: "w1-config"}, &cm); err != nil || cm.Data["a"] != "2" {
			t.Fatalf("child after the step: %v %v", err, cm.Data)
		}
	})

	t.Run("a dry-run step persists nothing", func(t *testing.T) {
		w := newWidget("w2", map[string]string{"x": "y"}, nil)
		editor.WaitFor(0, wait, bridgetest.Is("queue", "key", key("w2"), "transition", "added"))
		before := w.ResourceVersion
		reply := editor.Command("dryRun", widget.Name, key("w2"), false, wait)
		if !reply.OK || reply.Reconcile == nil || !reply.Reconcile.DryRun || reply.Reconcile.Error != "" {
			t.Fatalf("dry-run reply %+v", reply)
		}
		var verbs []string
		for _, wr := range reply.Writes {
			if !wr.DryRun {
				t.Fatalf("a write of a dry run without dryRun: %+v", wr)
			}
			verbs = append(verbs, wr.Verb+" "+wr.Resource+"/"+wr.Subresource)
		}
		if got := strings.Join(verbs, ", "); got != "patch widgets/, create configmaps/, update widgets/status" {
			t.Fatalf("planned writes: %s", got)
		}
		if reply.Writes[1].After == nil || reply.Writes[0].Before == nil {
			t.Fatalf("planned writes carry no objects for diffs: %+v", reply.Writes[:2])
		}
		var now widget.Widget
		if err := direct.Get(ctx, types.NamespacedName{Namespace: ns, Name: "w2"}, &now); err != nil {
			t.Fatal(err)
		}
		if now.ResourceVersion != before || len(now.Finalizers) != 0 {
			t.Fatalf("the dry run changed the Widget: rv %s → %s, finalizers %v", before, now.ResourceVersion, now.Finalizers)
		}
		err := direct.Get(ctx, types.NamespacedName{Namespace: ns, Name: "w2-config"}, &corev1.ConfigMap{})
		if !apierrors.IsNotFound(err) {
			t.Fatalf("the dry run created the child: %v", err)
		}
		if n := countStarts(key("w2")); n != 0 {
			t.Fatalf("%d real reconciles of w2", n)
		}
	})

	t.Run("an error path backs off 5, 10, 20 ms", func(t *testing.T) {
		newWidget("w3", nil, map[string]string{widget.FailAnnotation: "boom"})
		editor.WaitFor(0, wait, bridgetest.Is("queue", "key", key("w3"), "transition", "added"))
		var delays []string
		for i := range 3 {
			reply := editor.Command("step", widget.Name, key("w3"), false, wait)
			if !reply.OK || reply.Reconcile == nil || !strings.Contains(reply.Reconcile.Error, "boom") || reply.Reconcile.Terminal {
				t.Fatalf("step %d reply %+v", i, reply)
			}
			b, _ := editor.WaitFor(0, wait, bridgetest.Is("queue", "key", key("w3"), "transition", "backoff", "failures", i+1))
			delays = append(delays, fmt.Sprint(b["delayMs"]))
		}
		if got := strings.Join(delays, ","); got != "5,10,20" {
			t.Fatalf("backoff delays %s ms", got)
		}
		if r := editor.Command("resetBackoff", widget.Name, key("w3"), false, wait); !r.OK {
			t.Fatalf("reset: %+v", r)
		}
		editor.WaitFor(0, wait, bridgetest.Is("queue", "key", key("w3"), "transition", "forgotten"))
		snap := editor.Command("snapshot", "", "", false, wait)
		if !snap.OK || snap.Snapshot == nil {
			t.Fatalf("snapshot %+v", snap)
		}
	})

	t.Run("resume: the rest reconciles", func(t *testing.T) {
		if r := editor.Command("resume", "", "", false, wait); !r.OK {
			t.Fatalf("resume: %+v", r)
		}
		editor.WaitFor(0, wait, func(m map[string]any) bool {
			return m["type"] == "reconcileEnd" && m["key"] == key("w2") && m["dryRun"] == false && m["error"] == nil
		})
		var cm corev1.ConfigMap
		if err := direct.Get(ctx, types.NamespacedName{Namespace: ns, Name: "w2-config"}, &cm); err != nil {
			t.Fatalf("child of w2 after resume: %v", err)
		}
	})
}

func hasCause(m map[string]any, kind, resource string) bool {
	list, _ := m["causes"].([]any)
	if m["type"] == "reconcileStart" {
		list, _ = m["triggers"].([]any)
	}
	for _, c := range list {
		c := c.(map[string]any)
		if c["kind"] == kind && c["resource"] == resource {
			return true
		}
	}
	return false
}

func hasCauseRV(m map[string]any, kind, rv string) bool {
	list, _ := m["causes"].([]any)
	if m["type"] == "reconcileStart" {
		list, _ = m["triggers"].([]any)
	}
	for _, c := range list {
		c := c.(map[string]any)
		if c["kind"] == kind && c["resourceVersion"] == rv && c["event"] == "update" {
			return true
		}
	}
	return false
}

// applyCRD creates the Widget CRD (samples/crd.yaml) when missing and waits until Widgets can be listed.
func applyCRD(t *testing.T, ctx context.Context, c client.Client) {
	t.Helper()
	f, err := os.Open("../../crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var crd unstructured.Unstructured
	if err := utilyaml.NewYAMLOrJSONDecoder(f, 4096).Decode(&crd.Object); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &crd); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	deadline := time.Now().Add(wait)
	for {
		err := c.List(ctx, &widget.WidgetList{})
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Widget CRD is not served: %v", err)
		}
		time.Sleep(100 * time.Millisecond) // polling the API server for the CRD, not timing a result
	}
}
