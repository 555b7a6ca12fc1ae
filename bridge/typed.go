package bridge

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Controllers with a custom request type (builder.TypedControllerManagedBy[MyReq], reconcile.TypedReconciler[MyReq],
// MyReq any comparable type other than reconcile.Request, e.g. a request that also names a cluster).
//
// The bridge's Queue and Reconciler work on reconcile.Request. For a custom type T each distinct item is interned
// once as a distinct reconcile.Request (keyTable): the Queue sees those requests, while its inner queue is the
// stock queue of T that controller-runtime would have built (priorityqueue.New[T], or client-go's rate-limited
// queue of T), seen through mappedInner, and the controller's rate limiter of T is called with the controller's
// own items. So the inner queue de-duplicates, orders and backs off exactly the items it would without the bridge
// (interning is one-to-one), and everything the bridge reports and obeys (transitions, causes, pause, step, step
// this key, reset backoff, dry-run) works unchanged.
//
// An item's key text (what the editor shows and sends back) is keyText's rendering, made unique per controller;
// it is also the interned request's requestKey, so the text round-trips. The table remembers every item the
// controller ever queued for the life of the process (a few dozen bytes per distinct item), since the editor may
// name any of them.

// keyTable interns the items of one controller's custom request type T. Safe for concurrent use.
type keyTable[T comparable] struct {
	mu     sync.RWMutex
	toReq  map[T]reconcile.Request
	toItem map[reconcile.Request]T
	byText map[string]reconcile.Request
}

func newKeyTable[T comparable]() *keyTable[T] {
	return &keyTable[T]{toReq: map[T]reconcile.Request{}, toItem: map[reconcile.Request]T{}, byText: map[string]reconcile.Request{}}
}

// req is item's request, interned on first use.
func (t *keyTable[T]) req(item T) reconcile.Request {
	t.mu.RLock()
	r, ok := t.toReq[item]
	t.mu.RUnlock()
	if ok {
		return r
	}
	return t.intern(item)
}

// intern is req's slow path, apart so that req's fast path does not move item to the heap (reflect takes its
// address here).
//
//go:noinline
func (t *keyTable[T]) intern(item T) reconcile.Request {
	text := keyText(reflect.ValueOf(&item).Elem())
	t.mu.Lock()
	defer t.mu.Unlock()
	if r, ok := t.toReq[item]; ok {
		return r
	}
	unique := text
	for n := 2; ; n++ {
		if _, taken := t.byText[unique]; !taken {
			break
		}
		unique = fmt.Sprintf("%s #%d", text, n)
	}
	r := requestForText(unique)
	t.toReq[item] = r
	t.toItem[r] = item
	t.byText[unique] = r
	return r
}

// item is the controller's item behind r (ok false for a request no item was interned as).
func (t *keyTable[T]) item(r reconcile.Request) (T, bool) {
	t.mu.RLock()
	item, ok := t.toItem[r]
	t.mu.RUnlock()
	return item, ok
}

// parse implements keyResolver.
func (t *keyTable[T]) parse(text string) (reconcile.Request, bool) {
	t.mu.RLock()
	r, ok := t.byText[text]
	t.mu.RUnlock()
	return r, ok
}

// parseCustomKey reads text for the controller named controller through keys, with the error the editor shows
// for a text none of its items had.
func parseCustomKey(keys keyResolver, controller, text string) (reconcile.Request, error) {
	if text == "" {
		return reconcile.Request{}, fmt.Errorf("a key is required")
	}
	if r, ok := keys.parse(text); ok {
		return r, nil
	}
	return reconcile.Request{}, fmt.Errorf("controller %q has a custom request type and never queued a key shown as %q: only keys it has queued can be named", controller, text)
}

// objectKeyText matches the texts that are an object's key ("namespace/name" or "name" with the characters
// Kubernetes allows in them): such a text is interned as that object's request, so the editor's Resources view,
// owned-child causes and the like find the object.
var objectKeyText = regexp.MustCompile(`^([a-z0-9][-a-z0-9.]*/)?[a-zA-Z0-9][-a-zA-Z0-9._:]*$`)

// requestForText is the request interned for a (unique) key text: the object's request when the text is an
// object key, else a request whose Name is the text. Either way requestKey(requestForText(s)) == s.
func requestForText(s string) reconcile.Request {
	if objectKeyText.MatchString(s) {
		if r, err := parseKey(s); err == nil && requestKey(r) == s {
			return r
		}
	}
	return reconcile.Request{NamespacedName: types.NamespacedName{Name: s}}
}

var (
	requestType        = reflect.TypeFor[reconcile.Request]()
	namespacedNameType = reflect.TypeFor[types.NamespacedName]()
	stringerType       = reflect.TypeFor[fmt.Stringer]()
)

// keyText renders an item of a custom request type for the editor:
//   - a struct: the object key of its first reconcile.Request or types.NamespacedName field (embedded or not),
//     then its other non-zero fields as "Field=value" in parentheses, e.g. "shop/cart (ClusterName=eu-1)"; a
//     struct without such a field is its non-zero fields alone. Fields are rendered without their own String
//     methods where a promoted one would hide them (an embedded reconcile.Request's String names only the
//     object).
//   - a pointer: what it points to (a pointer to a non-struct type with a String method: that).
//   - any other type: its String() when it has one, else fmt's %v.
func keyText(v reflect.Value) string {
	if v.Kind() == reflect.Pointer && !v.IsNil() && (v.Elem().Kind() == reflect.Struct || !v.Type().Implements(stringerType)) {
		return keyText(v.Elem()) // distinct pointers to equal values are told apart by the table (" #2")
	}
	if v.Kind() != reflect.Struct {
		if v.Type().Implements(stringerType) && v.CanInterface() {
			return v.Interface().(fmt.Stringer).String()
		}
		return fmt.Sprint(v)
	}
	if nn, ok := namespacedName(v); ok {
		return objectKey(nn.Namespace, nn.Name)
	}
	main := ""
	found := false
	var extras []string
	for i := range v.NumField() {
		f, ft := v.Field(i), v.Type().Field(i)
		if nn, ok := namespacedName(f); ok && !found && nn.Name != "" {
			main, found = objectKey(nn.Namespace, nn.Name), true
			continue
		}
		if f.IsZero() {
			continue
		}
		val := ""
		if f.Kind() == reflect.Struct {
			val = "{" + keyText(f) + "}"
		} else {
			val = fmt.Sprint(f)
		}
		extras = append(extras, ft.Name+"="+val)
	}
	switch {
	case found && len(extras) > 0:
		return main + " (" + strings.Join(extras, ", ") + ")"
	case found:
		return main
	case len(extras) > 0:
		return strings.Join(extras, ", ")
	}
	return "{}"
}

// namespacedName reads v when it is a reconcile.Request or a types.NamespacedName.
func namespacedName(v reflect.Value) (types.NamespacedName, bool) {
	switch v.Type() {
	case requestType:
		return types.NamespacedName{Namespace: v.Field(0).Field(0).String(), Name: v.Field(0).Field(1).String()}, true
	case namespacedNameType:
		return types.NamespacedName{Namespace: v.Field(0).String(), Name: v.Field(1).String()}, true
	}
	return types.NamespacedName{}, false
}

// ---- the queue ----

// typedQueue is what a controller with custom request type T gets from NewQueue: the bridge's Queue, with T
// items interned on the way in and looked up on the way out. It implements priorityqueue.PriorityQueue[T], so
// the controller keeps its priorities.
//
// Add, AddWithOpts, Forget and Done record through the Queue and call the inner queue of T directly with the item
// they hold (the same calls, in the same order, as the Queue's own methods make), so that the hot path looks an
// item up in the key table at most once per call; everything else goes through the Queue and mappedInner.
type typedQueue[T comparable] struct {
	q     *Queue
	inner priorityqueue.PriorityQueue[T]
	keys  *keyTable[T]
}

var _ priorityqueue.PriorityQueue[string] = (*typedQueue[string])(nil)

func (t *typedQueue[T]) Add(item T) {
	t.q.addNow(t.keys.req(item), false, 0) // as Queue.Add
	t.inner.Add(item)
}
func (t *typedQueue[T]) AddAfter(item T, d time.Duration) {
	t.q.AddAfter(t.keys.req(item), d)
}
func (t *typedQueue[T]) AddRateLimited(item T) { t.q.AddRateLimited(t.keys.req(item)) }
func (t *typedQueue[T]) AddWithOpts(o priorityqueue.AddOpts, items ...T) {
	for _, item := range items { // as Queue.AddWithOpts
		t.q.recordAddWithOpts(o, t.keys.req(item))
	}
	t.inner.AddWithOpts(o, items...)
}
func (t *typedQueue[T]) Get() (T, bool) {
	item, _, shutdown := t.GetWithPriority()
	return item, shutdown
}
func (t *typedQueue[T]) GetWithPriority() (T, int, bool) {
	r, p, shutdown := t.q.GetWithPriority()
	if shutdown {
		var zero T
		return zero, p, true
	}
	item, _ := t.keys.item(r) // handed out by the inner queue of T: always interned
	return item, p, false
}
func (t *typedQueue[T]) Done(item T) { // as Queue.Done
	tok, end := t.q.recordDone(t.keys.req(item))
	t.inner.Done(item)
	if tok != nil {
		tok.reply(ReplyMsg{ID: tok.id, OK: true, Reconcile: end})
	}
}
func (t *typedQueue[T]) Forget(item T) { // as Queue.Forget
	t.inner.Forget(item)
	if t.q.forgetReported() {
		t.q.recordForget(t.keys.req(item))
	}
}
func (t *typedQueue[T]) NumRequeues(item T) int { return t.q.NumRequeues(t.keys.req(item)) }
func (t *typedQueue[T]) Len() int               { return t.q.Len() }
func (t *typedQueue[T]) ShutDown()              { t.q.ShutDown() }
func (t *typedQueue[T]) ShutDownWithDrain()     { t.q.ShutDownWithDrain() }
func (t *typedQueue[T]) ShuttingDown() bool     { return t.q.ShuttingDown() }

// mappedInner is the stock queue of T as the Queue sees it: requests in, the controller's items to the inner
// queue. Every request the Queue passes was interned (it came in through typedQueue, or the editor named it and
// parseKey found it); one that was not is ignored rather than turned into a zero item.
//
// The inner queue is embedded for the methods that take no item (Len, ShutDown, ShutDownWithDrain,
// ShuttingDown); every method with an item is mapped below.
type mappedInner[T comparable] struct {
	priorityqueue.PriorityQueue[T]
	keys *keyTable[T]
}

var _ priorityqueue.PriorityQueue[reconcile.Request] = (*mappedInner[string])(nil)

func (m *mappedInner[T]) each(reqs []reconcile.Request) []T {
	items := make([]T, 0, len(reqs))
	for _, r := range reqs {
		if item, ok := m.keys.item(r); ok {
			items = append(items, item)
		}
	}
	return items
}

func (m *mappedInner[T]) Add(r reconcile.Request) {
	if item, ok := m.keys.item(r); ok {
		m.PriorityQueue.Add(item)
	}
}
func (m *mappedInner[T]) AddAfter(r reconcile.Request, d time.Duration) {
	if item, ok := m.keys.item(r); ok {
		m.PriorityQueue.AddAfter(item, d)
	}
}
func (m *mappedInner[T]) AddRateLimited(r reconcile.Request) {
	if item, ok := m.keys.item(r); ok {
		m.PriorityQueue.AddRateLimited(item)
	}
}
func (m *mappedInner[T]) AddWithOpts(o priorityqueue.AddOpts, reqs ...reconcile.Request) {
	if items := m.each(reqs); len(items) > 0 {
		m.PriorityQueue.AddWithOpts(o, items...)
	}
}
func (m *mappedInner[T]) Get() (reconcile.Request, bool) {
	r, _, shutdown := m.GetWithPriority()
	return r, shutdown
}
func (m *mappedInner[T]) GetWithPriority() (reconcile.Request, int, bool) {
	item, p, shutdown := m.PriorityQueue.GetWithPriority()
	if shutdown {
		return reconcile.Request{}, p, true
	}
	return m.keys.req(item), p, false
}
func (m *mappedInner[T]) Done(r reconcile.Request) {
	if item, ok := m.keys.item(r); ok {
		m.PriorityQueue.Done(item)
	}
}
func (m *mappedInner[T]) Forget(r reconcile.Request) {
	if item, ok := m.keys.item(r); ok {
		m.PriorityQueue.Forget(item)
	}
}
func (m *mappedInner[T]) NumRequeues(r reconcile.Request) int {
	if item, ok := m.keys.item(r); ok {
		return m.PriorityQueue.NumRequeues(item)
	}
	return 0
}

// requestLimiter is the controller's rate limiter of T as the Queue sees it (requests in).
type requestLimiter[T comparable] struct {
	inner workqueue.TypedRateLimiter[T]
	keys  *keyTable[T]
}

func (l *requestLimiter[T]) When(r reconcile.Request) time.Duration {
	item, _ := l.keys.item(r) // called by the inner queue with its own item, interned
	return l.inner.When(item)
}
func (l *requestLimiter[T]) Forget(r reconcile.Request) {
	if item, ok := l.keys.item(r); ok {
		l.inner.Forget(item)
	}
}
func (l *requestLimiter[T]) NumRequeues(r reconcile.Request) int {
	if item, ok := l.keys.item(r); ok {
		return l.inner.NumRequeues(item)
	}
	return 0
}

// itemLimiter is the rate limiter the inner queue of T calls (items in): When goes through the Queue's observed
// limiter (which reports the backoff, and calls the controller's limiter through requestLimiter); Forget and
// NumRequeues, which the observed limiter only forwards, go to the controller's limiter directly (no round trip
// through the key table on every successful reconcile's Forget).
type itemLimiter[T comparable] struct {
	observed workqueue.TypedRateLimiter[reconcile.Request]
	user     workqueue.TypedRateLimiter[T]
	keys     *keyTable[T]
}

func (l *itemLimiter[T]) When(item T) time.Duration { return l.observed.When(l.keys.req(item)) }
func (l *itemLimiter[T]) Forget(item T)             { l.user.Forget(item) }
func (l *itemLimiter[T]) NumRequeues(item T) int    { return l.user.NumRequeues(item) }

// defaultTypedRateLimiter is controller-runtime's default rate limiter for a controller of T (Options.RateLimiter
// nil): as DefaultRateLimiter.
func defaultTypedRateLimiter[T comparable](usePriorityQueue bool) workqueue.TypedRateLimiter[T] {
	if usePriorityQueue {
		return workqueue.NewTypedItemExponentialFailureRateLimiter[T](5*time.Millisecond, 1000*time.Second)
	}
	return workqueue.DefaultTypedControllerRateLimiter[T]()
}

// newTypedQueue builds the bridge's queue for a controller of custom request type T: the inner queue exactly as
// controller-runtime's default NewQueue builds it for T (priorityqueue.New[T] with the controller's limiter, or
// client-go's rate-limited queue of T), wrapped like any other controller's.
func newTypedQueue[T comparable](cfg queueConfig, limiter workqueue.TypedRateLimiter[T], keys *keyTable[T]) *typedQueue[T] {
	if limiter == nil {
		limiter = defaultTypedRateLimiter[T](cfg.priorityQueue)
	}
	usePQ := cfg.priorityQueue
	var built priorityqueue.PriorityQueue[T] // the inner queue of T, set by newInner (called by newQueue)
	cfg.limiter = &requestLimiter[T]{inner: limiter, keys: keys}
	cfg.custom = &customKeys{keys: keys, newInner: func(name string, log logr.Logger, observed workqueue.TypedRateLimiter[reconcile.Request], clk clock.WithTickerAndDelayedExecution) priorityqueue.PriorityQueue[reconcile.Request] {
		rl := &itemLimiter[T]{observed: observed, user: limiter, keys: keys}
		var inner priorityqueue.PriorityQueue[T]
		if usePQ {
			inner = priorityqueue.New(name, func(o *priorityqueue.Opts[T]) {
				o.Log = log
				o.RateLimiter = rl
			})
		} else {
			conf := workqueue.TypedRateLimitingQueueConfig[T]{Name: name}
			if _, real := clk.(clock.RealClock); !real {
				conf.Clock = clk
			}
			inner = &clientGoAdapter[T]{workqueue.NewTypedRateLimitingQueueWithConfig[T](rl, conf)}
		}
		built = inner
		return &mappedInner[T]{PriorityQueue: inner, keys: keys}
	}}
	q := newQueue(cfg)
	return &typedQueue[T]{q: q, inner: built, keys: keys}
}

// ---- the reconciler ----

// typedReconciler is what WrapTyped returns: the bridge's Reconciler, called with the item's interned request,
// around the controller's reconciler of T.
type typedReconciler[T comparable] struct {
	w    *Reconciler
	keys *keyTable[T]
}

func (r *typedReconciler[T]) Reconcile(ctx context.Context, item T) (reconcile.Result, error) {
	return r.w.Reconcile(ctx, r.keys.req(item))
}

// innerOf is the controller's reconciler of T as the bridge's Reconciler calls it (with an interned request).
func innerOf[T comparable](r reconcile.TypedReconciler[T], keys *keyTable[T], controller string) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		item, ok := keys.item(req)
		if !ok {
			return reconcile.Result{}, fmt.Errorf("controller %q has a custom request type and never queued %s", controller, requestKey(req))
		}
		return r.Reconcile(ctx, item)
	})
}

// keyTableFor is the key table of the controller named name for items of T, shared by its queue and its
// reconciler (whichever comes first creates it). A name used with two request types gets a fresh table for the
// second, and an error is logged: the two halves would not see each other's keys.
func keyTableFor[T comparable](h *hub, name string) *keyTable[T] {
	h.mu.Lock()
	defer h.mu.Unlock()
	if t, ok := h.customKeys[name].(*keyTable[T]); ok {
		return t
	}
	if prev := h.customKeys[name]; prev != nil {
		h.log.Error(nil, fmt.Sprintf("bridge: controller %q is used with two request types (%T and %s): pass each controller's own name", name, prev, reflect.TypeFor[T]()))
	}
	t := newKeyTable[T]()
	h.customKeys[name] = t
	return t
}

// isRequest reports whether T is reconcile.Request (the bridge's own type: no interning).
func isRequest[T comparable]() bool { return reflect.TypeFor[T]() == requestType }
