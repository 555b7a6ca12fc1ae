package bridge

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// realClient is a client of the local control plane the Go test phase starts (RECONCILE_LAB_KUBECONFIG); the
// test is skipped without it.
func realClient(t *testing.T) client.WithWatch {
	t.Helper()
	c, err := client.NewWithWatch(realConfig(t), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// realConfig is the REST config of the local control plane the Go test phase starts (RECONCILE_LAB_KUBECONFIG);
// the test is skipped without it.
func realConfig(t *testing.T) *rest.Config {
	t.Helper()
	kubeconfig := os.Getenv("RECONCILE_LAB_KUBECONFIG")
	if kubeconfig == "" {
		t.Skip("RECONCILE_LAB_KUBECONFIG is not set: run through `npm test -- --only go`, which starts the local control plane")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// scratchNamespace creates a namespace for one test (deleted when it ends).
func scratchNamespace(t *testing.T, c client.Client) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "bridge-client-"}}
	if err := c.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), ns) })
	return ns.Name
}

// journalingClient is what a test of the bridge client's journal needs: the plain client of the local control
// plane (to arrange and inspect, unjournaled), a scratch namespace, the editor that receives the journal, the
// bridge's client over the plain one, and a context that ends after 60 s or with the test.
func journalingClient(t *testing.T) (real client.WithWatch, ns string, e *testEditor, c client.WithWatch, ctx context.Context) {
	t.Helper()
	real = realClient(t)
	ns = scratchNamespace(t, real)
	e = newTestEditor(t, false)
	c = newClient(connectedHub(t, e), real)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return real, ns, e, c, ctx
}

// nextWrite is the next write message's Write.
func nextWrite(t *testing.T, e *testEditor) Write {
	t.Helper()
	m := e.next(isType("write"))
	raw, _ := json.Marshal(m["write"])
	var w Write
	if err := json.Unmarshal(raw, &w); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestJournalNamesGeneratedAndSelectedObjects: a Create with metadata.generateName is journaled under the name
// the server generated (it was journaled as "namespace/" with no name), in a dry run too; a DeleteAllOf with
// InNamespace and a label selector is journaled with its namespace and selector (it named neither).
func TestJournalNamesGeneratedAndSelectedObjects(t *testing.T) {
	real, ns, e, c, ctx := journalingClient(t)

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "log-", Namespace: ns, Labels: map[string]string{"app": "beacon"}}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if w := nextWrite(t, e); w.Verb != "create" || w.Name != cm.Name || w.Namespace != ns || w.ResourceVersionAfter == "" {
		t.Fatalf("create with generateName journaled as %+v, want name %q", w, cm.Name)
	}

	dry := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "plan-", Namespace: ns}}
	dctx := withReconcileInfo(ctx, &reconcileInfo{controller: "c", key: ns + "/x", id: "dryrun-1", dryRun: true})
	if err := c.Create(dctx, dry); err != nil {
		t.Fatal(err)
	}
	if w := nextWrite(t, e); !w.DryRun || w.Name == "" || w.Name == "plan-" || w.Name != dry.Name {
		t.Fatalf("dry-run create with generateName journaled as %+v, want the generated name %q", w, dry.Name)
	}

	if err := c.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(ns), client.MatchingLabels{"app": "beacon"}); err != nil {
		t.Fatal(err)
	}
	w := nextWrite(t, e)
	if w.Verb != "deleteAllOf" || w.Namespace != ns || w.Selector != "app=beacon" || w.Resource != "configmaps" || w.Error != "" {
		t.Fatalf("deleteAllOf journaled as %+v, want namespace %q and selector app=beacon", w, ns)
	}
	var left corev1.ConfigMapList
	if err := real.List(ctx, &left, client.InNamespace(ns), client.MatchingLabels{"app": "beacon"}); err != nil {
		t.Fatal(err)
	}
	if len(left.Items) != 0 {
		t.Fatalf("deleteAllOf left %d objects", len(left.Items))
	}
}

// TestJournalServerSideApply: a client.Apply (typed apply configuration) is journaled with its resource and the
// resourceVersion the server answered (it read ".v1 … rv — → —"), and in a dry run with the object before and the
// object the server would store, so the dry-run shows a diff (it showed none); nothing is persisted.
func TestJournalServerSideApply(t *testing.T) {
	real, ns, e, c, ctx := journalingClient(t)
	owner := client.FieldOwner("bridge-test")

	if err := c.Apply(ctx, corev1ac.ConfigMap("applied", ns).WithData(map[string]string{"message": "one"}), client.ForceOwnership, owner); err != nil {
		t.Fatal(err)
	}
	w := nextWrite(t, e)
	if w.Verb != "apply" || w.Resource != "configmaps" || w.Kind != "ConfigMap" || w.Namespace != ns || w.Name != "applied" || w.ResourceVersionAfter == "" || w.DryRun {
		t.Fatalf("apply journaled as %+v", w)
	}
	stored := w.ResourceVersionAfter

	dctx := withReconcileInfo(ctx, &reconcileInfo{controller: "c", key: ns + "/x", id: "dryrun-1", dryRun: true})
	if err := c.Apply(dctx, corev1ac.ConfigMap("applied", ns).WithData(map[string]string{"message": "two"}), client.ForceOwnership, owner); err != nil {
		t.Fatal(err)
	}
	w = nextWrite(t, e)
	data := func(m map[string]any) any {
		d, _ := m["data"].(map[string]any)
		return d["message"]
	}
	if !w.DryRun || w.ResourceVersionBefore != stored || data(w.Before) != "one" || data(w.After) != "two" || w.Resource != "configmaps" {
		t.Fatalf("dry-run apply journaled as %+v, want before message one (rv %s), after message two", w, stored)
	}
	if md, _ := w.After["metadata"].(map[string]any); md["managedFields"] != nil {
		t.Fatal("managedFields in the journaled object")
	}
	var cm corev1.ConfigMap
	if err := real.Get(ctx, client.ObjectKey{Namespace: ns, Name: "applied"}, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["message"] != "one" || cm.ResourceVersion != stored {
		t.Fatalf("the dry-run apply persisted: %v rv %s", cm.Data, cm.ResourceVersion)
	}
}

// TestJournalWriteThatRemovesTheLastFinalizer: an update or patch that removes the last finalizer of a
// Terminating object makes the API server delete it, and answers with the object at its last resourceVersion
// (journaled as "rv N → N", which read as a no-op); the write is journaled deleted=true, in a dry run too (the
// object stays). A write that leaves a finalizer on a Terminating object, or touches a live one, is not.
func TestJournalWriteThatRemovesTheLastFinalizer(t *testing.T) {
	real, ns, e, c, ctx := journalingClient(t)
	key := client.ObjectKey{Namespace: ns, Name: "held"}

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns, Finalizers: []string{"lab.example/a", "lab.example/b"}}}
	if err := real.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data = map[string]string{"live": "yes"}
	if err := c.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if w := nextWrite(t, e); w.Verb != "update" || w.Deleted {
		t.Fatalf("an update of a live object journaled as %+v, want deleted=false", w)
	}
	if err := real.Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if err := real.Get(ctx, key, cm); err != nil || cm.DeletionTimestamp == nil {
		t.Fatalf("the object is not Terminating: %v %+v", err, cm.ObjectMeta)
	}

	// One finalizer of two removed: still Terminating, not deleted.
	cm.Finalizers = []string{"lab.example/b"}
	if err := c.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if w := nextWrite(t, e); w.Deleted || w.ResourceVersionAfter == w.ResourceVersionBefore {
		t.Fatalf("removing one of two finalizers journaled as %+v, want deleted=false and a new resourceVersion", w)
	}

	// A dry-run update removing the last one: would delete; nothing persisted.
	dctx := withReconcileInfo(ctx, &reconcileInfo{controller: "c", key: key.String(), id: "dryrun-1", dryRun: true})
	dry := cm.DeepCopy()
	dry.Finalizers = nil
	if err := c.Update(dctx, dry); err != nil {
		t.Fatal(err)
	}
	if w := nextWrite(t, e); !w.DryRun || !w.Deleted || w.Verb != "update" {
		t.Fatalf("a dry-run update removing the last finalizer journaled as %+v, want dryRun and deleted", w)
	}
	if err := real.Get(ctx, key, &corev1.ConfigMap{}); err != nil {
		t.Fatalf("the dry-run update deleted the object: %v", err)
	}

	// A patch removing the last one: the server deletes the object, same resourceVersion in its answer.
	before := cm.DeepCopy()
	cm.Finalizers = nil
	if err := c.Patch(ctx, cm, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	w := nextWrite(t, e)
	if w.Verb != "patch" || !w.Deleted || w.DryRun || w.Error != "" || w.ResourceVersionAfter == "" {
		t.Fatalf("a patch removing the last finalizer journaled as %+v, want deleted", w)
	}
	if err := real.Get(ctx, key, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Fatalf("after the patch the object is still there (%v)", err)
	}
}

// unmappedClient is a client whose REST mapper knows no kind (a failed discovery): writes still work, but the
// bridge cannot name their resource.
type unmappedClient struct{ client.WithWatch }

func (unmappedClient) RESTMapper() meta.RESTMapper { return meta.NewDefaultRESTMapper(nil) }

// TestSecretBodiesAreNeverSentEvenWithoutARESTMapping: a dry-run update and patch of a Secret through a client whose
// REST mapper fails carry no patch and no value (the Secret was recognised by its resource only, so an unmapped
// write sent its data and stringData in before/after/patch); the objects keep keys and annotations, with a
// changed value marked, so the plan's diff says what changes.
func TestSecretBodiesAreNeverSentEvenWithoutARESTMapping(t *testing.T) {
	real := realClient(t)
	ns := scratchNamespace(t, real)
	c := newClient(connectedHub(t, newTestEditor(t, false)), unmappedClient{real})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const value = "hunter2-never-sent"
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: ns}, StringData: map[string]string{"password": value}}
	if err := real.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	ri := &reconcileInfo{controller: "c", key: ns + "/creds", id: "dryrun-1", dryRun: true}
	dctx := withReconcileInfo(ctx, ri)
	before := s.DeepCopy()
	s.StringData = map[string]string{"password": value + "-new"}
	s.Annotations = map[string]string{"example.com/hash": "abc"}
	if err := c.Update(dctx, s); err != nil {
		t.Fatal(err)
	}
	if err := c.Patch(dctx, s, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	if len(ri.writes) != 2 {
		t.Fatalf("planned writes: %+v", ri.writes)
	}
	for i, verb := range []string{"update", "patch"} {
		w := ri.writes[i] // the dry-run step's reply carries these
		raw, _ := json.Marshal(w)
		if w.Verb != verb || w.Kind != "Secret" || w.Resource != "" {
			t.Fatalf("%s journaled as %+v (want kind Secret and no resource: the mapper failed)", verb, w)
		}
		if w.Patch != "" || strings.Contains(string(raw), "hunter2") || strings.Contains(string(raw), "aHVudGVy") {
			t.Fatalf("a Secret's value was sent: %s", raw)
		}
		if verb == "update" {
			data, _ := w.After["data"].(map[string]any)
			ann, _ := w.After["metadata"].(map[string]any)["annotations"].(map[string]any)
			if data["password"] != secretChanged || ann["example.com/hash"] != "abc" {
				t.Fatalf("the planned update says neither which key changes nor its other changes: %s", raw)
			}
			if old, _ := w.Before["data"].(map[string]any); old["password"] != secretMask {
				t.Fatalf("before: %s", raw)
			}
		}
	}
}

// TestMaskSecretObject: every value of data and stringData and the last-applied annotation is masked; after marks
// what differs from before; keys and everything else stay; the input is not changed.
func TestMaskSecretObject(t *testing.T) {
	before := map[string]any{"kind": "Secret", "type": "Opaque", "data": map[string]any{"a": "c2VjcmV0", "b": "c2FtZQ=="},
		"metadata": map[string]any{"name": "s", "annotations": map[string]any{lastApplied: `{"stringData":{"a":"secret"}}`, "x": "1"}}}
	after := map[string]any{"kind": "Secret", "type": "Opaque", "data": map[string]any{"a": "bmV3", "b": "c2FtZQ==", "c": "YWRkZWQ="},
		"stringData": map[string]any{"a": "new"},
		"metadata":   map[string]any{"name": "s", "annotations": map[string]any{lastApplied: `{"stringData":{"a":"new"}}`, "x": "2"}}}
	w := &Write{Before: before, After: after, Patch: `{"stringData":{"a":"new"}}`}
	maskSecretValues(w)
	got, _ := json.Marshal(w)
	for _, v := range []string{"c2VjcmV0", "bmV3", "c2FtZQ", "YWRkZWQ", "secret\\\"", "\"new\""} {
		if strings.Contains(string(got), v) {
			t.Fatalf("value %s sent: %s", v, got)
		}
	}
	want := `{"verb":"","group":"","version":"","resource":"","name":"","dryRun":false,` +
		`"before":{"data":{"a":"***","b":"***"},"kind":"Secret","metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"***","x":"1"},"name":"s"},"type":"Opaque"},` +
		`"after":{"data":{"a":"*** (changed)","b":"***","c":"*** (changed)"},"kind":"Secret","metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"*** (changed)","x":"2"},"name":"s"},"stringData":{"a":"*** (changed)"},"type":"Opaque"}}`
	if string(got) != want {
		t.Fatalf("masked:\n%s\nwant\n%s", got, want)
	}
	if before["data"].(map[string]any)["a"] != "c2VjcmV0" || before["metadata"].(map[string]any)["annotations"].(map[string]any)[lastApplied] == secretMask {
		t.Fatal("the input was changed")
	}
}

// realManager is a manager on the local control plane for a test: its cache limited to namespace ns, metrics and
// probes off, controller names not validated (tests reuse names), set up by hub h as bridge.Setup would. Start it
// with startManager.
func realManager(t *testing.T, h *hub, ns string) manager.Manager {
	t.Helper()
	mopts := testManagerOptions(ns)
	setupWith(h, &mopts)
	mgr, err := manager.New(realConfig(t), mopts)
	if err != nil {
		t.Fatal(err)
	}
	return mgr
}

// testManagerOptions are a test manager's options: its cache on namespace ns, no metrics or probe servers, and
// controller names that may repeat across tests.
func testManagerOptions(ns string) manager.Options {
	return manager.Options{
		Scheme:                 scheme.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	}
}

// startManager starts mgr until the test ends; the test fails if it stops with an error.
func startManager(t *testing.T, mgr manager.Manager) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-stopped; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
}

// apiServerSetup is a test's start on the local control plane: a plain client, a scratch namespace, a test editor, a
// hub connected to it and a manager that hub set up (its cache on the scratch namespace, see realManager). The test
// adds its controllers to mgr, then calls startManager.
type apiServerSetup struct {
	plain client.WithWatch
	ns    string
	e     *testEditor
	h     *hub
	mgr   manager.Manager
}

// onAPIServer builds an apiServerSetup; the editor welcomes the program paused when paused is set.
func onAPIServer(t *testing.T, paused bool) apiServerSetup {
	t.Helper()
	plain := realClient(t)
	ns := scratchNamespace(t, plain)
	e := newTestEditor(t, paused)
	h := connectedHub(t, e)
	return apiServerSetup{plain: plain, ns: ns, e: e, h: h, mgr: realManager(t, h, ns)}
}

// configMapController adds the controller "configmap" to the manager: For ConfigMaps, the bridge's queue (with opts)
// and rec wrapped by the bridge.
func (s apiServerSetup) configMapController(t *testing.T, opts controller.Options, rec reconcile.Reconciler) {
	t.Helper()
	if err := builder.ControllerManagedBy(s.mgr).For(&corev1.ConfigMap{}).
		WithOptions(optionsFor(s.h, s.mgr, "configmap", opts)).
		Complete(wrapTyped(s.h, s.mgr, "configmap", rec, &corev1.ConfigMap{})); err != nil {
		t.Fatal(err)
	}
}

// TestRefusedSecretWriteErrorCarriesNoValue: the real kube-apiserver refuses a merge patch of a Secret (a value
// that is not base64) with a 422 that quotes the patched Secret, every stored value with it. The journaled write's
// error and the reconcile's error wrapping it name the field and the reason, never a value.
func TestRefusedSecretWriteErrorCarriesNoValue(t *testing.T) {
	real := realClient(t)
	ns := scratchNamespace(t, real)
	e := newTestEditor(t, false)
	c := newClient(connectedHub(t, e), real)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const stored, sent = "SUPERSECRET-P1", "PATCHSECRET-notbase64!!"
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "patch.me-1", Namespace: ns}, StringData: map[string]string{"apiKey": stored}}
	if err := real.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	ri := &reconcileInfo{controller: "c", key: ns + "/patch.me-1", id: "r-1"}
	err := c.Patch(withReconcileInfo(ctx, ri), s, client.RawPatch(types.MergePatchType, []byte(`{"data":{"bad":"`+sent+`"}}`)))
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), base64.StdEncoding.EncodeToString([]byte(stored))) {
		t.Fatalf("want the server's 422 quoting the stored value (what this test is about), got %v", err)
	}
	w := nextWrite(t, e)
	wrapped := ri.maskSecretErrors("ensure api key: " + err.Error())
	for _, text := range []string{w.Error, wrapped} {
		for _, leak := range []string{stored, base64.StdEncoding.EncodeToString([]byte(stored)), sent} {
			if strings.Contains(text, leak) {
				t.Fatalf("a value (%s) in %q", leak, text)
			}
		}
		if !strings.Contains(text, `is invalid`) || !strings.Contains(text, `Invalid value: "***"`) {
			t.Fatalf("the field and reason should stay: %q", text)
		}
	}
}

// TestJournalScaleWriteWithItsOwnBody: a scale subresource update sends a Scale (client.WithSubResourceBody) and the
// server's answer is decoded into it, not into the Deployment given as the object. It was journaled with the
// Deployment's unchanged resourceVersion as "after" (rv N → N, read as a write that stored nothing), and a dry run
// showed the Deployment before and after (no change) instead of the planned scale. Now the after is the body's: the
// version the server stored, and in a dry run the Scale before (read from the server) and after.
func TestJournalScaleWriteWithItsOwnBody(t *testing.T) {
	real, ns, e, c, ctx := journalingClient(t)
	labels := map[string]string{"app": "web"}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "example.invalid/web"}}}}}}
	if err := real.Create(ctx, dep); err != nil {
		t.Fatal(err)
	}
	scale := &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: 3}}
	if err := c.SubResource("scale").Update(ctx, dep, client.WithSubResourceBody(scale)); err != nil {
		t.Fatal(err)
	}
	w := nextWrite(t, e)
	var stored appsv1.Deployment
	if err := real.Get(ctx, client.ObjectKeyFromObject(dep), &stored); err != nil {
		t.Fatal(err)
	}
	if *stored.Spec.Replicas != 3 || w.Subresource != "scale" || w.Kind != "Deployment" {
		t.Fatalf("the scale update stored %d replicas and was journaled as %+v", *stored.Spec.Replicas, w)
	}
	if w.ResourceVersionBefore != dep.ResourceVersion || w.ResourceVersionAfter != stored.ResourceVersion {
		t.Fatalf("the scale update was journaled rv %q → %q, want %s → %s (the version the server stored)",
			w.ResourceVersionBefore, w.ResourceVersionAfter, dep.ResourceVersion, stored.ResourceVersion)
	}

	dctx := withReconcileInfo(ctx, &reconcileInfo{controller: "c", key: ns + "/web", id: "dryrun-1", dryRun: true})
	plan := &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: 5}}
	if err := c.SubResource("scale").Update(dctx, &stored, client.WithSubResourceBody(plan)); err != nil {
		t.Fatal(err)
	}
	w = nextWrite(t, e)
	replicas := func(m map[string]any) any {
		spec, _ := m["spec"].(map[string]any)
		return fmt.Sprintf("%v %v", m["kind"], spec["replicas"])
	}
	if !w.DryRun || replicas(w.Before) != "Scale 3" || replicas(w.After) != "Scale 5" {
		t.Fatalf("the dry-run scale update showed %v → %v, want the Scale with 3 → 5 replicas", replicas(w.Before), replicas(w.After))
	}
	if err := real.Get(ctx, client.ObjectKeyFromObject(dep), &stored); err != nil || *stored.Spec.Replicas != 3 {
		t.Fatalf("the dry run stored the scale: %d replicas (%v)", *stored.Spec.Replicas, err)
	}
}

// TestJournalSubresourceCreateWithItsOwnBody: a subresource create sends a body of another kind and decodes the
// server's answer into it. An eviction was journaled with the Pod's unchanged resourceVersion as after (rv N → N,
// although the eviction deleted the Pod); it now has none (the answer does not say), and its dry run shows the
// Eviction. A ServiceAccount token request's answer holds a signed token: it is never journaled, in a dry run
// either, while the write itself is.
func TestJournalSubresourceCreateWithItsOwnBody(t *testing.T) {
	real, ns, e, c, ctx := journalingClient(t)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "evictee", Namespace: ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.invalid/c"}}}}
	if err := real.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}

	dctx := withReconcileInfo(ctx, &reconcileInfo{controller: "c", key: ns + "/evictee", id: "dryrun-1", dryRun: true})
	if err := c.SubResource("eviction").Create(dctx, pod, &policyv1.Eviction{}); err != nil {
		t.Fatal(err)
	}
	w := nextWrite(t, e)
	if !w.DryRun || w.Subresource != "eviction" || w.After["kind"] != "Eviction" {
		t.Fatalf("the dry-run eviction was journaled as %+v, want the Eviction as its after", w)
	}
	var stored corev1.Pod
	if err := real.Get(ctx, client.ObjectKeyFromObject(pod), &stored); err != nil || stored.DeletionTimestamp != nil {
		t.Fatalf("the dry-run eviction evicted the Pod: %v, deletionTimestamp %v", err, stored.DeletionTimestamp)
	}

	if err := c.SubResource("eviction").Create(ctx, pod, &policyv1.Eviction{}); err != nil {
		t.Fatal(err)
	}
	w = nextWrite(t, e)
	if w.Verb != "create" || w.Subresource != "eviction" || w.Kind != "Pod" || w.Error != "" {
		t.Fatalf("the eviction was journaled as %+v", w)
	}
	if w.ResourceVersionBefore != pod.ResourceVersion || w.ResourceVersionAfter != "" {
		t.Fatalf("the eviction was journaled rv %q → %q, want %s → none (the answer is an Eviction's, not the Pod's)",
			w.ResourceVersionBefore, w.ResourceVersionAfter, pod.ResourceVersion)
	}

	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot", Namespace: ns}}
	if err := real.Create(ctx, sa); err != nil {
		t.Fatal(err)
	}
	tctx := withReconcileInfo(ctx, &reconcileInfo{controller: "c", key: ns + "/robot", id: "dryrun-2", dryRun: true})
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}
	if err := c.SubResource("token").Create(tctx, sa, tr); err != nil {
		t.Fatal(err)
	}
	w = nextWrite(t, e)
	raw, _ := json.Marshal(w)
	if w.Subresource != "token" || !w.DryRun || w.After != nil {
		t.Fatalf("the dry-run token request was journaled as %s, want the write without the server's answer", raw)
	}
	if tr.Status.Token != "" && strings.Contains(string(raw), tr.Status.Token) {
		t.Fatalf("the token the server signed was journaled: %s", raw)
	}
}
