package bridge

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
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
// Everything else is the inner cache's, unchanged.

type bridgeCache struct {
	cache.Cache
	h      *hub
	scheme *runtime.Scheme
	mapper meta.RESTMapper
}

func newCache(h *hub, c cache.Cache, opts cache.Options) cache.Cache {
	return &bridgeCache{Cache: c, h: h, scheme: opts.Scheme, mapper: opts.Mapper}
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
	return &bridgeInformer{Informer: i, c: c, gvk: gvk}, nil
}

// GetInformerForKind returns the inner informer with attributing handler registration.
func (c *bridgeCache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...cache.InformerGetOption) (cache.Informer, error) {
	i, err := c.Cache.GetInformerForKind(ctx, gvk, opts...)
	if err != nil || i == nil {
		return i, err
	}
	return &bridgeInformer{Informer: i, c: c, gvk: gvk}, nil
}

type bridgeInformer struct {
	cache.Informer
	c   *bridgeCache
	gvk schema.GroupVersionKind

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

// attributing calls the inner handler inside a record of the event on this goroutine.
type attributing struct {
	inner toolscache.ResourceEventHandler
	i     *bridgeInformer
}

func (a *attributing) OnAdd(obj any, isInInitialList bool) {
	end := beginEvent(eventFor("add", a.i.resourceName(), a.i.gvk.Kind, obj, isInInitialList, a.i.c.h.clock.Now()))
	defer end()
	a.inner.OnAdd(obj, isInInitialList)
}

func (a *attributing) OnUpdate(oldObj, newObj any) {
	if a.i.c.h.check.holdUpdate(a, a.i.resourceName(), oldObj, newObj) {
		return // withheld by a check (checks.go); release delivers it coalesced
	}
	a.deliverUpdate(oldObj, newObj)
}

// deliverUpdate calls the inner handler's OnUpdate inside a record of the event.
func (a *attributing) deliverUpdate(oldObj, newObj any) {
	end := beginEvent(eventFor("update", a.i.resourceName(), a.i.gvk.Kind, newObj, false, a.i.c.h.clock.Now()))
	defer end()
	a.inner.OnUpdate(oldObj, newObj)
}

func (a *attributing) OnDelete(obj any) {
	o := obj
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		o = d.Obj
	}
	end := beginEvent(eventFor("delete", a.i.resourceName(), a.i.gvk.Kind, o, false, a.i.c.h.clock.Now()))
	defer end()
	a.inner.OnDelete(obj)
}
