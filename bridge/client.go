package bridge

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// The bridge client (the manager's NewClient, through controller-runtime's interceptor) journals every write:
// verb, resource, key, resourceVersion before → after, error; during a reconcile tagged with its controller, key
// and reconcile ID. A live write's before is the newest resourceVersion the bridge knows of the object when it is
// sent (rvmemo.go), so before == after says the server stored nothing, for an apply and a patch of a stale object
// too. In a dry-run step (IsDryRun) every write carries dryRun=All — nothing is persisted — and the
// planned writes are collected with the object before (read through the same client) and the object the server
// would store, for diffs. Reads are not intercepted. A Secret's values are never sent (maskSecretValues): its
// patch is left out and its values are masked in the objects.

// maxPatchChars bounds the patch text journaled per write.
const maxPatchChars = 8 << 10

func newClient(h *hub, c client.WithWatch) client.WithWatch {
	h.clientWrapped.Store(true)
	j := &journal{h: h}
	return interceptor.NewClient(c, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			ri, w := j.begin(ctx, c, "create", obj, "", nil)
			if j.dry(ri) {
				opts = append(opts, client.DryRunAll)
			}
			err := j.do(ctx, ri, w, func(ctx context.Context) error { return c.Create(ctx, obj, opts...) })
			j.end(ctx, c, ri, w, obj, err)
			return err
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			ri, w := j.begin(ctx, c, "update", obj, "", nil)
			if j.dry(ri) {
				opts = append(opts, client.DryRunAll)
			}
			err := j.do(ctx, ri, w, func(ctx context.Context) error { return c.Update(ctx, obj, opts...) })
			j.end(ctx, c, ri, w, obj, err)
			return err
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			ri, w := j.begin(ctx, c, "patch", obj, "", patch)
			if j.dry(ri) {
				opts = append(opts, client.DryRunAll)
			}
			err := j.do(ctx, ri, w, func(ctx context.Context) error { return c.Patch(ctx, obj, patch, opts...) })
			j.end(ctx, c, ri, w, obj, err)
			return err
		},
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			ri := reconcileInfoFrom(ctx)
			if j.dry(ri) {
				opts = append(opts, client.DryRunAll)
			}
			w := j.beginApply(ctx, c, ri, obj, "")
			err := j.do(ctx, ri, &w, func(ctx context.Context) error { return c.Apply(ctx, obj, opts...) })
			j.endApply(ri, &w, obj, err)
			return err
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			ri, w := j.begin(ctx, c, "delete", obj, "", nil)
			if j.dry(ri) {
				opts = append(opts, client.DryRunAll)
			}
			err := j.do(ctx, ri, w, func(ctx context.Context) error { return c.Delete(ctx, obj, opts...) })
			j.end(ctx, c, ri, w, nil, err)
			return err
		},
		DeleteAllOf: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteAllOfOption) error {
			ri, w := j.begin(ctx, c, "deleteAllOf", obj, "", nil)
			describeDeleteAllOf(w, opts)
			if namespaced, err := c.IsObjectNamespaced(obj); err == nil && !namespaced {
				w.Namespace = "" // InNamespace is ignored for a cluster-scoped kind: every object of it
			}
			if j.dry(ri) {
				opts = append(opts, client.DryRunAll)
			}
			err := j.do(ctx, ri, w, func(ctx context.Context) error { return c.DeleteAllOf(ctx, obj, opts...) })
			j.end(ctx, c, ri, w, nil, err)
			return err
		},
		SubResourceCreate: func(ctx context.Context, c client.Client, sub string, obj client.Object, subObj client.Object, opts ...client.SubResourceCreateOption) error {
			ri, w := j.begin(ctx, c, "create", obj, sub, nil)
			if j.dry(ri) {
				opts = append(opts, client.DryRunAll)
			}
			err := j.do(ctx, ri, w, func(ctx context.Context) error { return c.SubResource(sub).Create(ctx, obj, subObj, opts...) })
			// The body (an Eviction, a TokenRequest…) is what is sent and what the server's answer is decoded into;
			// obj is only the object the subresource belongs to, left as it was. The write's after is the body's:
			// the answer does not say which resourceVersion obj has now (an evicted Pod's changes), so none is shown
			// rather than obj's unchanged one.
			j.end(ctx, c, ri, w, subObj, err)
			return err
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			ri, w := j.begin(ctx, c, "update", obj, sub, nil)
			// With a body of its own (a Scale for "scale"), the body is what is sent and what the server's answer
			// is decoded into: obj is only the object the subresource belongs to, and is left as it was.
			o := &client.SubResourceUpdateOptions{}
			o.ApplyOptions(opts)
			after := obj
			if body := o.SubResourceBody; body != nil {
				after = body
				j.beginBody(ctx, c, ri, w, obj, body)
			}
			if j.dry(ri) {
				opts = append(opts, client.DryRunAll)
			}
			err := j.do(ctx, ri, w, func(ctx context.Context) error { return c.SubResource(sub).Update(ctx, obj, opts...) })
			j.end(ctx, c, ri, w, after, err)
			return err
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			ri, w := j.begin(ctx, c, "patch", obj, sub, patch)
			if j.dry(ri) {
				opts = append(opts, client.DryRunAll)
			}
			err := j.do(ctx, ri, w, func(ctx context.Context) error { return c.SubResource(sub).Patch(ctx, obj, patch, opts...) })
			j.end(ctx, c, ri, w, obj, err)
			return err
		},
		SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			ri := reconcileInfoFrom(ctx)
			if j.dry(ri) {
				opts = append(opts, client.DryRunAll)
			}
			w := j.beginApply(ctx, c, ri, obj, sub)
			err := j.do(ctx, ri, &w, func(ctx context.Context) error { return c.SubResource(sub).Apply(ctx, obj, opts...) })
			j.endApply(ri, &w, obj, err)
			return err
		},
	})
}

// secretMask replaces a Secret's value in a journaled object; secretChanged marks, in the object after a write, a
// value that differs from the object before, so a dry-run diff still shows which keys change (as kubectl diff does)
// without what they hold.
const (
	secretMask    = "***"
	secretChanged = "*** (changed)"
	lastApplied   = "kubectl.kubernetes.io/last-applied-configuration"
)

// maskSecretValues removes every value of a Secret from w: its patch (which holds values) and the values of
// data and stringData and the last-applied annotation (which repeats them) in before and after, each replaced by
// secretMask, or in after by secretChanged when it differs from before. Keys, labels, other annotations, type and
// owner references stay, so the diff of a planned Secret write says what changes.
func maskSecretValues(w *Write) {
	w.Patch = ""
	orig := w.Before
	w.Before = maskSecretObject(w.Before, nil)
	w.After = maskSecretObject(w.After, orig)
}

// maskSecretObject is a copy of obj with its values masked (nil for nil); a value that differs from the one at the
// same place in against (when given) is secretChanged.
func maskSecretObject(obj, against map[string]any) map[string]any {
	if obj == nil {
		return nil
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	for _, field := range []string{"data", "stringData"} {
		values, ok := obj[field].(map[string]any)
		if !ok {
			if _, present := obj[field]; present {
				out[field] = secretMask // not a map: masked whole
			}
			continue
		}
		old, _ := against[field].(map[string]any)
		masked := make(map[string]any, len(values))
		for k, v := range values {
			masked[k] = secretMask
			if against != nil && !reflect.DeepEqual(old[k], v) {
				masked[k] = secretChanged
			}
		}
		out[field] = masked
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		if ann, ok := md["annotations"].(map[string]any); ok {
			if v, ok := ann[lastApplied]; ok {
				md2 := make(map[string]any, len(md))
				for k, x := range md {
					md2[k] = x
				}
				ann2 := make(map[string]any, len(ann))
				for k, x := range ann {
					ann2[k] = x
				}
				ann2[lastApplied] = secretMask
				if against != nil {
					oldMD, _ := against["metadata"].(map[string]any)
					oldAnn, _ := oldMD["annotations"].(map[string]any)
					if !reflect.DeepEqual(oldAnn[lastApplied], v) {
						ann2[lastApplied] = secretChanged
					}
				}
				md2["annotations"] = ann2
				out["metadata"] = md2
			}
		}
	}
	return out
}

// isSecret reports whether w writes a core Secret, whose body (data, stringData, and the last-applied annotation
// that repeats them) is never sent: by its kind or by its resource, so a write whose REST mapping failed (no
// resource) or whose kind is unknown is still recognised by the other.
func isSecret(w *Write) bool {
	return w.Group == "" && (w.Kind == "Secret" || w.Resource == "secrets")
}

// isCredentialAnswer reports whether the server's answer to w is a credential: a ServiceAccount's token subresource
// answers a TokenRequest whose status holds a signed token (in a dry run too). Such an answer is never journaled;
// the write still is (verb, object, outcome).
func isCredentialAnswer(w *Write) bool {
	return w.Group == "" && w.Subresource == "token"
}

func (ri *reconcileInfo) dry() bool { return ri != nil && ri.dryRun }

// dry reports whether a write made with ri is sent as dryRun=All: in a dry-run step, and for every write of a
// dry-run-only process (EnvDryRunOnly).
func (j *journal) dry(ri *reconcileInfo) bool { return ri.dry() || j.h.dryRunOnly }

// do makes one write; a persisted write of a check instance must stay in its scratch namespace (checks.go:
// outsideScratch) and passes the check's gate (checks.go: hold after write i). A live write's before is the newest
// resourceVersion known when it is sent (newestBefore); a write the server refused keeps the one it carried (a 409
// Conflict is about that one).
func (j *journal) do(ctx context.Context, ri *reconcileInfo, w *Write, write func(ctx context.Context) error) error {
	// The server's warnings about this request reach w through its context (warningRouter).
	ctx, sink := withWarningSink(ctx)
	defer func() { w.Warnings = sink.texts() }()
	if j.dry(ri) {
		return write(ctx)
	}
	if err := j.h.check.outsideScratch(w); err != nil {
		return err
	}
	return j.h.check.gate(ctx, func() error {
		carried := w.ResourceVersionBefore
		j.newestBefore(w)
		err := write(ctx)
		if err != nil {
			w.ResourceVersionBefore = carried
		}
		return err
	})
}

// checkBodies: a check instance journals before/after of persisted writes too (for its end-state diffs).
func (j *journal) checkBodies() bool { return j.h.check != nil && j.h.check.direct != nil }

type journal struct{ h *hub }

// newestBefore sets w's ResourceVersionBefore, for a live write about to be sent, to the newest resourceVersion the
// bridge knows of the object (rvmemo.go): the one it noted (the server's answer to its last write of the object, or a
// later one its informer events showed), else the one the program's cache holds (an informer the program started
// only), or the one w already has (the written object's) when that is newer. An update that names its
// resourceVersion keeps it: the server stores it only over exactly that one.
// A write to another subresource than status (scale, eviction…) keeps the written object's: the server's answer to
// it is another object (its after is that body's, SubResourceUpdate). No API request, no informer started.
func (j *journal) newestBefore(w *Write) {
	if w.Verb == "create" || w.Verb == "deleteAllOf" || (w.Verb == "update" && w.ResourceVersionBefore != "") ||
		(w.Subresource != "" && w.Subresource != "status") {
		return
	}
	ref, ok := refOf(w)
	if !ok {
		return
	}
	rv := j.h.rvs.get(ref)
	if c := j.h.cache.Load(); c != nil && rv == "" { // the first write of the object: the cache's read is paid once
		rv = c.cachedRV(schema.GroupKind{Group: w.Group, Kind: w.Kind}, client.ObjectKey{Namespace: w.Namespace, Name: w.Name})
	}
	w.ResourceVersionBefore = newerRV(rv, w.ResourceVersionBefore)
}

// noteAfter remembers the resourceVersion the server answered to a live write that succeeded, for the next write's
// before (newestBefore); a delete, or a write that deleted its object, forgets the object. Only writes whose answer
// is the object itself count (the object, or its status): another subresource's answer is another object.
func (j *journal) noteAfter(w *Write) {
	if w.DryRun || w.Error != "" || (w.Subresource != "" && w.Subresource != "status") {
		return
	}
	ref, ok := refOf(w)
	if !ok {
		return
	}
	if w.Verb == "delete" || w.Deleted {
		j.h.rvs.forget(ref)
		return
	}
	j.h.rvs.note(ref, w.ResourceVersionAfter)
}

// begin describes a write about to be made (and, in a dry run, reads the object before it).
func (j *journal) begin(ctx context.Context, c client.Client, verb string, obj client.Object, sub string, patch client.Patch) (*reconcileInfo, *Write) {
	ri := reconcileInfoFrom(ctx)
	w := &Write{Verb: verb, Namespace: obj.GetNamespace(), Name: obj.GetName(), Subresource: sub,
		ResourceVersionBefore: obj.GetResourceVersion(), DryRun: j.dry(ri)}
	if w.Name == "" && verb == "create" && sub == "" {
		w.Name = obj.GetGenerateName() // the prefix until the server answers (end sets the generated name)
	}
	if gvk, err := c.GroupVersionKindFor(obj); err == nil {
		w.Group, w.Version, w.Kind = gvk.Group, gvk.Version, gvk.Kind
		if m, err := c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
			w.Resource = m.Resource.Resource
			if m.Scope.Name() == meta.RESTScopeNameRoot {
				w.Namespace = "" // the client ignores a namespace a cluster-scoped object names
			}
		}
	}
	secret := isSecret(w)
	if patch != nil {
		w.PatchType = string(patch.Type())
		if data, err := patch.Data(obj); err == nil && !secret {
			w.Patch = truncate(string(data), maxPatchChars)
		}
	}
	if (j.dry(ri) || (j.checkBodies() && !secret)) && verb != "create" && verb != "deleteAllOf" && obj.GetName() != "" {
		var reader client.Reader = c
		if !j.dry(ri) {
			reader = j.h.check.direct // the server's object, not the (maybe stale) cache's
		}
		if before, ok := obj.DeepCopyObject().(client.Object); ok {
			if err := reader.Get(ctx, client.ObjectKeyFromObject(obj), before); err == nil {
				w.Before = withTypeMeta(toMap(before), w)
				if w.ResourceVersionBefore == "" {
					w.ResourceVersionBefore = before.GetResourceVersion()
				}
			}
		}
	}
	return ri, w
}

// beginBody is begin's object before, for a subresource write with a body of its own (a Scale for "scale"): in a
// dry run or a check instance, the subresource as the server has it (read into a copy of body), not the object it
// belongs to, so that before and after are the same kind of object.
func (j *journal) beginBody(ctx context.Context, c client.Client, ri *reconcileInfo, w *Write, obj, body client.Object) {
	if !j.dry(ri) && !j.checkBodies() {
		return
	}
	w.Before = nil
	// A subresource is read from the API server (a cache serves none).
	before, ok := body.DeepCopyObject().(client.Object)
	if !ok || c.SubResource(w.Subresource).Get(ctx, obj, before) != nil {
		return
	}
	if !isSecret(w) {
		w.Before = objectMap(c, before, w)
	}
}

// objectMap is obj as the journal shows it, with its apiVersion and kind: w's (withTypeMeta), unless obj is another
// kind of object than the one w writes (a subresource's own body, such as a Scale).
func objectMap(c client.Client, obj client.Object, w *Write) map[string]any {
	m := toMap(obj)
	if c != nil && m != nil {
		if gvk, err := c.GroupVersionKindFor(obj); err == nil && gvk.Kind != "" && gvk.GroupKind() != (schema.GroupKind{Group: w.Group, Kind: w.Kind}) {
			m["apiVersion"], m["kind"] = gvk.GroupVersion().String(), gvk.Kind
			return m
		}
	}
	return withTypeMeta(m, w)
}

// end completes and emits a write; after is the object as returned by the server (nil for deletes).
func (j *journal) end(_ context.Context, c client.Client, ri *reconcileInfo, w *Write, after client.Object, err error) {
	if err != nil {
		w.Error = err.Error()
	} else if after != nil {
		w.ResourceVersionAfter = after.GetResourceVersion()
		w.Deleted = w.Verb != "create" && deletedByWrite(after)
		if w.Verb == "create" && w.Subresource == "" && after.GetName() != "" {
			w.Name = after.GetName() // metadata.generateName: the name the server generated
		}
		if (j.dry(ri) || (j.checkBodies() && !isSecret(w))) && !isCredentialAnswer(w) {
			w.After = objectMap(c, after, w) // a Secret's values are masked in emit
		}
	}
	j.noteAfter(w)
	j.emit(ri, *w)
}

// emit is the one way out of every journaled write; a Secret's values never pass it (maskSecretValues).
func (j *journal) emit(ri *reconcileInfo, w Write) {
	if isSecret(&w) {
		if w.Error != "" {
			raw := w.Error
			w.Error = maskSecretText(raw, secretValues(w.Before, w.After), w.Name, w.Namespace)
			ri.noteSecretError(raw, w.Error)
		}
		maskSecretValues(&w)
	}
	m := &WriteMsg{Write: w, At: ms(j.h.clock.Now())}
	if ri != nil {
		m.Controller, m.Key, m.ReconcileID = ri.controller, ri.key, ri.id
		if ri.dryRun { // the planned writes of a dry-run step go into its reply
			ri.mu.Lock()
			ri.writes = append(ri.writes, w)
			ri.mu.Unlock()
		} else if q := j.h.queue(ri.controller); q != nil {
			q.sendInOrder(m) // between its reconcile's start and end, as they are sent
			return
		}
	}
	j.h.send(m)
}

// deletedByWrite reports whether the server's answer to a successful update, patch or apply says the write
// deleted the object: it is Terminating (deletionTimestamp set) with no finalizers left and no grace period
// pending — the API server's own condition for deleting an object during an update. The server then answers with
// the object as written, whose resourceVersion is its last one (before == after), which alone reads as a no-op.
// A Pod in graceful termination (deletionGracePeriodSeconds > 0) is not deleted by an update and is not reported.
func deletedByWrite(after metav1.Object) bool {
	if after.GetDeletionTimestamp() == nil || len(after.GetFinalizers()) > 0 {
		return false
	}
	g := after.GetDeletionGracePeriodSeconds()
	return g == nil || *g == 0
}

// beginApply describes a server-side apply (client.Apply) about to be made: its kind, object and resource, and
// in a dry run (or a check instance) the object before it, read as unstructured through the same client (an
// unstructured read goes to the API server unless the client caches unstructured objects).
func (j *journal) beginApply(ctx context.Context, c client.Client, ri *reconcileInfo, obj runtime.ApplyConfiguration, sub string) Write {
	w := applyWrite(obj)
	w.Subresource, w.DryRun = sub, j.dry(ri)
	gvk := schema.GroupVersionKind{Group: w.Group, Version: w.Version, Kind: w.Kind}
	if m, err := c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
		w.Resource = m.Resource.Resource
		if m.Scope.Name() == meta.RESTScopeNameRoot {
			w.Namespace = "" // the client ignores a namespace a cluster-scoped object names
		}
	}
	secret := isSecret(&w)
	if (j.dry(ri) || (j.checkBodies() && !secret)) && w.Name != "" && w.Kind != "" {
		var reader client.Reader = c
		if !j.dry(ri) {
			reader = j.h.check.direct
		}
		before := &unstructured.Unstructured{}
		before.SetGroupVersionKind(gvk)
		if err := reader.Get(ctx, client.ObjectKey{Namespace: w.Namespace, Name: w.Name}, before); err == nil {
			w.Before = toMap(before)
			w.ResourceVersionBefore = before.GetResourceVersion()
		}
	}
	return w
}

// endApply completes and emits an apply: the server's answer was decoded into obj (controller-runtime does), so
// its resourceVersion (and in a dry run or a check instance the object) is the one the server stored or would.
func (j *journal) endApply(ri *reconcileInfo, w *Write, obj runtime.ApplyConfiguration, err error) {
	if err != nil {
		w.Error = err.Error()
	} else if data, mErr := json.Marshal(obj); mErr == nil {
		after := &unstructured.Unstructured{}
		if after.UnmarshalJSON(data) == nil {
			w.ResourceVersionAfter = after.GetResourceVersion()
			w.Deleted = deletedByWrite(after)
			if j.dry(ri) || (j.checkBodies() && !isSecret(w)) {
				w.After = withTypeMeta(toMap(after), w) // a Secret's values are masked in emit
			}
		}
	}
	j.noteAfter(w)
	j.emit(ri, *w)
}

// applyWrite describes a server-side apply from the configuration's own apiVersion/kind/metadata.
func applyWrite(obj runtime.ApplyConfiguration) Write {
	w := Write{Verb: "apply"}
	data, err := json.Marshal(obj)
	if err != nil {
		return w
	}
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Namespace       string `json:"namespace"`
			Name            string `json:"name"`
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(data, &head)
	gv, _ := schema.ParseGroupVersion(head.APIVersion)
	w.Group, w.Version, w.Kind = gv.Group, gv.Version, head.Kind
	w.Namespace, w.Name = head.Metadata.Namespace, head.Metadata.Name
	w.ResourceVersionBefore = head.Metadata.ResourceVersion // "" unless the apply names one (then the server requires it)
	if !(gv.Group == "" && head.Kind == "Secret") {
		w.Patch = truncate(string(data), maxPatchChars)
		w.PatchType = "application/apply-patch+yaml"
	}
	return w
}

// toMap converts an object to JSON-shaped data without managedFields (noise in a diff).
func toMap(obj client.Object) map[string]any {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil
	}
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "managedFields")
	}
	return m
}

// withTypeMeta sets apiVersion and kind of a journaled object from the write's group, version and kind when the
// object lacks them: controller-runtime's typed client decodes a Get without its TypeMeta, while the object a write
// returns keeps the one it was sent with, so before and after differed in apiVersion and kind, which the checks'
// stale-cache oracle read as fields a stale write had set back. m is changed in place and returned (nil stays nil).
func withTypeMeta(m map[string]any, w *Write) map[string]any {
	if m == nil || w.Kind == "" || w.Version == "" {
		return m
	}
	if av, _ := m["apiVersion"].(string); av == "" {
		m["apiVersion"] = schema.GroupVersion{Group: w.Group, Version: w.Version}.String()
	}
	if k, _ := m["kind"].(string); k == "" {
		m["kind"] = w.Kind
	}
	return m
}

// describeDeleteAllOf fills in what a DeleteAllOf acts on: its namespace (InNamespace only: controller-runtime's
// client ignores the namespace of the object it is given, so without InNamespace it deletes in every namespace;
// "" then) and its label and field selectors ("" when it matches every object of the namespace, or of the cluster).
func describeDeleteAllOf(w *Write, opts []client.DeleteAllOfOption) {
	o := &client.DeleteAllOfOptions{}
	o.ApplyOptions(opts)
	w.Namespace = o.Namespace
	var sel []string
	if o.LabelSelector != nil && !o.LabelSelector.Empty() {
		sel = append(sel, o.LabelSelector.String())
	}
	if o.FieldSelector != nil && !o.FieldSelector.Empty() {
		sel = append(sel, o.FieldSelector.String())
	}
	w.Selector = strings.Join(sel, ",")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// withWatch adapts a client.Client that has no Watch (a developer's NewClient may return one) to the
// interceptor's client.WithWatch; Watch then reports that it is not supported.
type withWatch struct{ client.Client }

func (w withWatch) Watch(context.Context, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
	return nil, errNoWatch
}
