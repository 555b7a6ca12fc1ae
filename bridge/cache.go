package bridge

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// The bridge cache (the manager's NewCache) wraps handler registration on every informer it hands out: each
// event handler is called inside a record of the event (add/update/delete, resource, object key, RV, generation,
// owners, initial list), so the queue can attribute the Add the handler makes on the same goroutine (causes.go).
// Everything else is the inner cache's, unchanged. It also remembers each informer it handed out, so the editor can
// read the program's own cached copy of an object (cacheGet) from exactly the informer the program's watches use.

type bridgeCache struct {
	cache.Cache
	h      *hub
	scheme *runtime.Scheme
	mapper meta.RESTMapper

	mu sync.Mutex
	// handed are the informers GetInformer / GetInformerForKind returned, one per kind and flavour.
	handed []*bridgeInformer
}

func newCache(h *hub, c cache.Cache, opts cache.Options) *bridgeCache {
	return &bridgeCache{Cache: c, h: h, scheme: opts.Scheme, mapper: opts.Mapper}
}

// flavour is which of controller-runtime's informers of a kind an object asks for: it keeps typed, unstructured and
// metadata-only informers of one kind apart, each with its own store.
type flavour uint8

const (
	typedFlavour flavour = iota
	unstructuredFlavour
	metadataFlavour
)

func flavourOf(obj client.Object) flavour {
	switch obj.(type) {
	case runtime.Unstructured:
		return unstructuredFlavour
	case *metav1.PartialObjectMetadata:
		return metadataFlavour
	}
	return typedFlavour
}

// remember records an informer handed out (the first of its kind and flavour) and returns what to hand out; the
// editor is told when the cache has a resource it had no informer for.
func (c *bridgeCache) remember(i *bridgeInformer) *bridgeInformer {
	c.mu.Lock()
	for _, o := range c.handed {
		if o.gvk == i.gvk && o.flavour == i.flavour {
			c.mu.Unlock()
			return o
		}
	}
	before := len(c.resources())
	c.handed = append(c.handed, i)
	c.mu.Unlock()
	if m := c.informersMsg(); len(m.Resources) != before {
		c.h.sendCtrl(m)
	}
	return i
}

// resources is the resources of the informers handed out (plural.version.group, sorted, no duplicates); c.mu held.
func (c *bridgeCache) resources() []string {
	out := make([]string, 0, len(c.handed))
	for _, i := range c.handed {
		out = append(out, i.resourceName())
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// informersMsg is the informers message of the cache now.
func (c *bridgeCache) informersMsg() *InformersMsg {
	c.mu.Lock()
	defer c.mu.Unlock()
	return &InformersMsg{Resources: c.resources()}
}

// cacheGetTimeout bounds a cacheGet: the cache's Get waits for its informer's first sync.
const cacheGetTimeout = 10 * time.Second

// cachedObject is cacheGet: the object key ("namespace/name" or "name") of resource (plural.version.group; another
// version of the same plural and group is accepted) as the program's cache holds it, read from the informer its
// watches use (that version first; typed before unstructured before metadata-only), with apiVersion and kind; nil
// when that cache does not hold it; metadataOnly when that informer is metadata-only. It never starts an informer: a resource no watch of the program asked for is an
// error, as is a key outside the cache's namespaces. Secret values come as cached (the editor masks them).
func (c *bridgeCache) cachedObject(resource, key string) (obj map[string]any, metadataOnly bool, err error) {
	req, err := parseKey(key)
	if err != nil {
		return nil, false, err
	}
	c.mu.Lock()
	handed := slices.Clone(c.handed)
	c.mu.Unlock()
	rank := func(i *bridgeInformer) int {
		r := int(i.flavour)
		if i.resourceName() != resource {
			r += 10
		}
		return r
	}
	var best *bridgeInformer
	var watched []string
	for _, i := range handed {
		watched = append(watched, i.resourceName())
		if sameResource(i.resourceName(), withoutVersion(resource)) && (best == nil || rank(i) < rank(best)) {
			best = i
		}
	}
	if best == nil && len(watched) == 0 {
		// No watch has started an informer yet (a controller's sources start with it, and wait for leader election
		// or a cache sync): saying that none asked for it would send the person looking for a missing watch.
		return nil, false, fmt.Errorf("the program's cache has no informer for %s yet: no watch of the program has started one", resource)
	}
	if best == nil {
		slices.Sort(watched)
		return nil, false, fmt.Errorf("the program's cache has no informer for %s: none of its watches asked for it (it caches %s)", resource, strings.Join(slices.Compact(watched), ", "))
	}
	if s := c.h.scope.Load(); s != nil && req.Namespace != "" {
		if ns := s.namespaces(best.gvk); ns != nil && !slices.Contains(ns, req.Namespace) {
			return nil, false, fmt.Errorf("%s is outside the program's cache: it watches %s only in namespace(s) %s", key, best.resourceName(), strings.Join(ns, ", "))
		}
	}
	into, err := c.objectOf(best)
	if err != nil {
		return nil, false, fmt.Errorf("reading the cached %s: %w", best.resourceName(), err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cacheGetTimeout)
	defer cancel()
	if err := c.Cache.Get(ctx, req.NamespacedName, into); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("reading %s from the program's cache: %w", key, err)
	}
	out, err := runtime.DefaultUnstructuredConverter.ToUnstructured(into)
	if err != nil {
		return nil, false, fmt.Errorf("converting the cached %s: %w", key, err)
	}
	// Typed objects from the cache carry no TypeMeta.
	apiVersion, kind := best.gvk.ToAPIVersionAndKind()
	out["apiVersion"], out["kind"] = apiVersion, kind
	return out, best.flavour == metadataFlavour, nil
}

// objectOf is an empty object of i's kind and flavour, to read from the cache: a cache Get with it uses i and no
// other informer.
func (c *bridgeCache) objectOf(i *bridgeInformer) (client.Object, error) {
	switch i.flavour {
	case unstructuredFlavour:
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(i.gvk)
		return u, nil
	case metadataFlavour:
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(i.gvk)
		return m, nil
	}
	o, err := c.scheme.New(i.gvk)
	if err != nil {
		return nil, err
	}
	co, ok := o.(client.Object)
	if !ok {
		return nil, fmt.Errorf("%T is not a client.Object", o)
	}
	return co, nil
}

// cachedRV is the resourceVersion of the object key of kind gk as the program's cache holds it (rvmemo.go: one of
// the candidates for a live write's before), "" when it holds none. It reads only an informer a watch of the program
// started (handed out, typed before unstructured before metadata-only, any version: all are the one object) and
// only once that informer has synced, so it never starts an informer and never waits; it makes no API request and
// copies no object (the cache's own copy is read, never changed). A key outside the cache's namespaces is "".
func (c *bridgeCache) cachedRV(gk schema.GroupKind, key client.ObjectKey) string {
	c.mu.Lock() // held through the Get: RemoveInformer cannot remove the informer in between (a Get would restart it)
	defer c.mu.Unlock()
	var best *bridgeInformer
	for _, i := range c.handed {
		if i.gvk.Group == gk.Group && i.gvk.Kind == gk.Kind && (best == nil || i.flavour < best.flavour) {
			best = i
		}
	}
	if best == nil || !best.HasSynced() {
		return ""
	}
	into, err := c.objectOf(best)
	if err != nil {
		return ""
	}
	if err := c.Cache.Get(context.Background(), key, into, client.UnsafeDisableDeepCopy); err != nil {
		return ""
	}
	return into.GetResourceVersion()
}

// RemoveInformer removes the inner informer and forgets it as handed out: the bridge reads no cache of a kind whose
// informer the program removed (a Get would start it again). The editor is told when a resource has no informer left.
func (c *bridgeCache) RemoveInformer(ctx context.Context, obj client.Object) error {
	var gvk schema.GroupVersionKind
	if c.scheme != nil {
		gvk, _ = apiutil.GVKForObject(obj, c.scheme)
	}
	fl := flavourOf(obj)
	c.mu.Lock()
	before := len(c.resources())
	err := c.Cache.RemoveInformer(ctx, obj)
	if err == nil {
		c.handed = slices.DeleteFunc(c.handed, func(i *bridgeInformer) bool { return i.gvk == gvk && i.flavour == fl })
	}
	after := len(c.resources())
	c.mu.Unlock()
	if after != before {
		c.h.sendCtrl(c.informersMsg())
	}
	return err
}

// withoutVersion is a plural.version.group name as plural.group ("plural" for the core group).
func withoutVersion(resource string) string {
	plural, rest, _ := strings.Cut(resource, ".")
	if _, group, ok := strings.Cut(rest, "."); ok && group != "" {
		return plural + "." + group
	}
	return plural
}

// GetInformer returns the inner informer with attributing handler registration.
func (c *bridgeCache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	i, err := c.Cache.GetInformer(ctx, obj, opts...)
	if err != nil || i == nil {
		return i, err
	}
	var gvk schema.GroupVersionKind
	if c.scheme != nil {
		gvk, _ = apiutil.GVKForObject(obj, c.scheme)
	}
	return c.remember(&bridgeInformer{Informer: i, c: c, gvk: gvk, flavour: flavourOf(obj)}), nil
}

// GetInformerForKind returns the inner informer with attributing handler registration.
func (c *bridgeCache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...cache.InformerGetOption) (cache.Informer, error) {
	i, err := c.Cache.GetInformerForKind(ctx, gvk, opts...)
	if err != nil || i == nil {
		return i, err
	}
	return c.remember(&bridgeInformer{Informer: i, c: c, gvk: gvk}), nil
}

type bridgeInformer struct {
	cache.Informer
	c       *bridgeCache
	gvk     schema.GroupVersionKind
	flavour flavour

	once     sync.Once
	resource string
}

// resourceName is plural.version.group (the protocol's Cause.resource), resolved once.
func (i *bridgeInformer) resourceName() string {
	i.once.Do(func() {
		plural := i.gvk.Kind
		if i.c.mapper != nil && i.gvk.Kind != "" {
			if m, err := i.c.mapper.RESTMapping(i.gvk.GroupKind(), i.gvk.Version); err == nil {
				plural = m.Resource.Resource
			}
		}
		i.resource = plural + "." + i.gvk.Version
		if i.gvk.Group != "" {
			i.resource += "." + i.gvk.Group
		}
	})
	return i.resource
}

func (i *bridgeInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.Informer.AddEventHandler(&attributing{inner: h, i: i})
}

func (i *bridgeInformer) AddEventHandlerWithResyncPeriod(h toolscache.ResourceEventHandler, p time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.Informer.AddEventHandlerWithResyncPeriod(&attributing{inner: h, i: i}, p)
}

func (i *bridgeInformer) AddEventHandlerWithOptions(h toolscache.ResourceEventHandler, o toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.Informer.AddEventHandlerWithOptions(&attributing{inner: h, i: i}, o)
}

// attributing calls the inner handler inside a record of the event on this goroutine; an attached program that is
// not a check instance never passes a scratch copy's event to it (scratch.go: hub.hidesScratchCopies).
type attributing struct {
	inner toolscache.ResourceEventHandler
	i     *bridgeInformer
}

// noteRV keeps the journal's newest resourceVersion of the event's object current (rvmemo.go): an add or update
// shows its version, a delete forgets it.
func (i *bridgeInformer) noteRV(ev *informerEvent, deleted bool) {
	ref := objectRef{group: i.gvk.Group, kind: i.gvk.Kind, namespace: ev.namespace, name: ev.name}
	if deleted {
		i.c.h.rvs.forget(ref)
	} else {
		i.c.h.rvs.seen(ref, ev.rv)
	}
}

func (a *attributing) OnAdd(obj any, isInInitialList bool) {
	if a.i.c.h.hidesScratchCopies() && isScratchCopy(obj) {
		return
	}
	ev := eventFor("add", a.i.resourceName(), a.i.gvk.Kind, obj, isInInitialList, a.i.c.h.clock.Now())
	a.i.noteRV(ev, false)
	end := beginEvent(ev)
	defer end()
	a.inner.OnAdd(obj, isInInitialList)
}

func (a *attributing) OnUpdate(oldObj, newObj any) {
	if a.i.c.h.hidesScratchCopies() && isScratchCopy(newObj) {
		return
	}
	if a.i.c.h.check.holdUpdate(a, a.i.resourceName(), oldObj, newObj) {
		return // withheld by a check (checks.go); release delivers it coalesced
	}
	a.deliverUpdate(oldObj, newObj)
}

// deliverUpdate calls the inner handler's OnUpdate inside a record of the event.
func (a *attributing) deliverUpdate(oldObj, newObj any) {
	ev := eventFor("update", a.i.resourceName(), a.i.gvk.Kind, newObj, false, a.i.c.h.clock.Now()).withDeletion(oldObj, newObj)
	a.i.noteRV(ev, false)
	end := beginEvent(ev)
	defer end()
	a.inner.OnUpdate(oldObj, newObj)
}

func (a *attributing) OnDelete(obj any) {
	if a.i.c.h.hidesScratchCopies() && isScratchCopy(obj) {
		return
	}
	o := obj
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		o = d.Obj
	}
	ev := eventFor("delete", a.i.resourceName(), a.i.gvk.Kind, o, false, a.i.c.h.clock.Now())
	a.i.noteRV(ev, true)
	end := beginEvent(ev)
	defer end()
	a.inner.OnDelete(obj)
}
