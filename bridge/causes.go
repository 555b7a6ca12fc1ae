package bridge

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Why-queued attribution.
//
// Informer handlers run synchronously on their listener goroutine, and controller-runtime's event handlers
// (EnqueueRequestForObject, EnqueueRequestForOwner, EnqueueRequestsFromMapFunc) call the queue's Add* inside that
// call. The cache wrapper (cache.go) records the event being dispatched against the dispatching goroutine; the
// queue's AddWithOpts looks it up on its own goroutine. The lookup costs a goroutine-id read only while at least
// one event is being dispatched (an atomic counter is checked first), so queue operations outside informer
// handlers pay nothing.

// informerEvent is one event being dispatched to a handler registered through the bridge cache.
type informerEvent struct {
	event     string // add | update | delete
	resource  string // plural.version.group
	namespace string
	name      string
	// kind is the object's kind (from its informer), "" when unknown.
	kind       string
	rv         string
	generation int64
	initial    bool
	// deletionRequested: an update that set metadata.deletionTimestamp (withDeletion).
	deletionRequested bool
	owners            []ownerRef
	at                time.Time
}

type ownerRef struct {
	// group is the owner's API group from its apiVersion ("" for the core group).
	group, kind, name string
	controller        bool
}

var (
	eventsInFlight atomic.Int64
	eventsMu       sync.Mutex
	eventsByG      = map[uint64]*informerEvent{}
)

// beginEvent records ev as being dispatched on this goroutine; the returned func ends it.
func beginEvent(ev *informerEvent) func() {
	g := goid()
	eventsMu.Lock()
	prev := eventsByG[g]
	eventsByG[g] = ev
	eventsMu.Unlock()
	eventsInFlight.Add(1)
	return func() {
		eventsInFlight.Add(-1)
		eventsMu.Lock()
		if prev != nil {
			eventsByG[g] = prev
		} else {
			delete(eventsByG, g)
		}
		eventsMu.Unlock()
	}
}

// currentEvent is the informer event being dispatched on this goroutine, nil when none.
func currentEvent() *informerEvent {
	if eventsInFlight.Load() == 0 {
		return nil
	}
	g := goid()
	eventsMu.Lock()
	ev := eventsByG[g]
	eventsMu.Unlock()
	return ev
}

// goid is the current goroutine's id, read from the first line of its stack ("goroutine 123 [running]:").
func goid() uint64 {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	b := bytes.TrimPrefix(buf[:n], []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, _ := strconv.ParseUint(string(b), 10, 64)
	return id
}

// eventFor builds the attribution record of an informer object of the given resource and kind ("" when unknown).
func eventFor(event, resource, kind string, obj any, initial bool, now time.Time) *informerEvent {
	ev := &informerEvent{event: event, resource: resource, kind: kind, initial: initial, at: now}
	if m, err := meta.Accessor(obj); err == nil {
		ev.namespace, ev.name = m.GetNamespace(), m.GetName()
		ev.rv, ev.generation = m.GetResourceVersion(), m.GetGeneration()
		for _, r := range m.GetOwnerReferences() {
			group, _, _ := strings.Cut(r.APIVersion, "/")
			if !strings.Contains(r.APIVersion, "/") {
				group = "" // "v1": the core group
			}
			ev.owners = append(ev.owners, ownerRef{group: group, kind: r.Kind, name: r.Name, controller: r.Controller != nil && *r.Controller})
		}
	}
	return ev
}

// withDeletion marks an update event whose new object has a deletionTimestamp the old one lacked (a delete of an
// object with finalizers: the server keeps it, so informers see an update). Returns ev.
func (ev *informerEvent) withDeletion(oldObj, newObj any) *informerEvent {
	o, err1 := meta.Accessor(oldObj)
	n, err2 := meta.Accessor(newObj)
	ev.deletionRequested = err1 == nil && err2 == nil && o.GetDeletionTimestamp() == nil && n.GetDeletionTimestamp() != nil
	return ev
}

// causeFor attributes one add of key: to the informer event on this goroutine (the object itself → informer, an
// object it owns → owned, anything else → watch, i.e. a mapped watch), else to a requeue-after, else to an add
// from outside any informer event (a channel source, the developer's own code). forObj is the controller's For
// type (zero when unknown): an object of another resource is never "the object itself", even with the key's name
// (a child named like its owner, as kubebuilder projects often name them), and an object is "owned" only by an
// owner reference of the For kind and group (an owner of another kind that happens to share the key's name makes
// the add a watch's); with forObj unknown, the name decides alone.
func causeFor(ev *informerEvent, o priorityqueue.AddOpts, key reconcile.Request, at int64, forObj forType) Cause {
	if ev != nil {
		c := Cause{Event: ev.event, Resource: ev.resource, ObjectKey: objectKey(ev.namespace, ev.name), ObjectKind: ev.kind,
			ResourceVersion: ev.rv, Generation: ev.generation, DeletionRequested: ev.deletionRequested, Initial: ev.initial, At: ms(ev.at)}
		switch {
		case key.Namespace == ev.namespace && key.Name == ev.name && (forObj.resource == "" || sameResource(ev.resource, forObj.resource)):
			c.Kind = CauseInformer
		case ev.ownedBy(key, forObj):
			c.Kind = CauseOwned
		default:
			c.Kind = CauseWatch
		}
		if o.After > 0 {
			c.AfterMs = o.After.Milliseconds()
		}
		if o.Priority != nil {
			c.Note = "priority " + strconv.Itoa(*o.Priority)
		}
		return c
	}
	if o.After > 0 {
		return Cause{Kind: CauseRequeueAfter, AfterMs: o.After.Milliseconds(), At: at}
	}
	return plainCause(at)
}

// plainCause is the cause of an add now outside an informer event (causeFor with no event and no delay).
func plainCause(at int64) Cause {
	return Cause{Kind: CauseWatch, Note: PlainCauseNote, At: at}
}

// sameResource reports whether an informer's resource ("plural.version.group", "plural.version" for the core group)
// is forResource ("plural.group", "plural" for the core group).
func sameResource(informerResource, forResource string) bool {
	plural, rest, _ := strings.Cut(informerResource, ".")
	_, group, _ := strings.Cut(rest, ".")
	if group == "" {
		return forResource == plural
	}
	return forResource == plural+"."+group
}

// forType is a controller's For type as its announcement names it; the zero value is "unknown" (no bridge.Wrap
// with its object, or the announcement was withdrawn).
type forType struct {
	// resource is "plural.group" ("plural" for the core group), "" when unknown.
	resource string
	// group and kind are the For kind's API group ("" for the core group) and kind; kind is "" when unknown.
	group, kind string
}

// forTypeOf is a controller's For type from its announcement (zero when not announced).
func forTypeOf(info ControllerMsg) forType {
	t := forType{resource: info.Resource, group: info.Group, kind: info.Kind}
	if info.Resource != "" && info.Group != "" {
		t.resource = info.Resource + "." + info.Group
	}
	return t
}

// ownedBy reports whether the event's object has an owner reference to key: same namespace (or key
// cluster-scoped), the key's name, and, when forObj's kind is known, the For kind and group.
func (ev *informerEvent) ownedBy(key reconcile.Request, forObj forType) bool {
	if key.Namespace != ev.namespace && key.Namespace != "" {
		return false
	}
	for _, o := range ev.owners {
		if o.name == key.Name && (forObj.kind == "" || (o.kind == forObj.kind && o.group == forObj.group)) {
			return true
		}
	}
	return false
}

// requestKey is a reconcile request's key on the wire: "namespace/name", or the name alone when cluster-scoped
// (the editor's object keys; reconcile.Request.String() would give "/name").
func requestKey(r reconcile.Request) string {
	return objectKey(r.Namespace, r.Name)
}

// objectKey is "namespace/name", or name alone when ns is empty (cluster-scoped).
func objectKey(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return strings.Join([]string{a, b}, "; ")
}

func itoa(i int) string { return strconv.Itoa(i) }
