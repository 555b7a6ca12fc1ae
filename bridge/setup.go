package bridge

import (
	"errors"
	"fmt"
	"reflect"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// The few lines a developer adds (a kubebuilder cmd/main.go and SetupWithManager):
//
//	mgrOpts := ctrl.Options{Scheme: scheme, LeaderElection: leaderElect /* … */}
//	bridge.Setup(&mgrOpts)                       // journal writes, dry run, why-queued
//	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), mgrOpts)
//
//	ctrl.NewControllerManagedBy(mgr).For(&v1.Widget{}).Owns(&corev1.ConfigMap{}).Named("widget").
//		WithOptions(bridge.Options(mgr, "widget", controller.Options{})).
//		Complete(bridge.Wrap(mgr, "widget", r))
//
// A typed controller with a custom request type MyReq takes the same Options (controller.TypedOptions[MyReq]) and
// WrapTyped[MyReq] instead of Wrap.
//
// With RECONCILE_LAB_BRIDGE unset each of these returns its argument (or controller-runtime's default)
// unchanged.

var errNoWatch = errors.New("bridge: the wrapped client does not support Watch")

// Setup wires the manager-wide parts of the bridge into o: NewClient (every write journaled; dry-run steps) and
// NewCache (why-queued attribution), wrapping whatever o already sets (or controller-runtime's defaults).
// Without RECONCILE_LAB_BRIDGE it changes nothing.
func Setup(o *manager.Options) {
	if h := theHub(); h != nil {
		setupWith(h, o)
	}
}

// setupWith is Setup on hub h.
func setupWith(h *hub, o *manager.Options) {
	if h.check != nil {
		h.check.applyManagerOptions(o)
	}
	h.leaderElection.Store(o.LeaderElection)
	prevClient := o.NewClient
	if prevClient == nil {
		prevClient = client.New
	}
	o.NewClient = func(cfg *rest.Config, opts client.Options) (client.Client, error) {
		// The server's warnings about each write are journaled with it, and still logged as before (warnings.go).
		c, err := prevClient(routeWarnings(cfg), opts)
		if err != nil {
			return nil, err
		}
		ww, ok := c.(client.WithWatch)
		if !ok {
			ww = withWatch{c}
		}
		if h.check != nil && h.check.cfg.namespace != "" {
			// A check instance journals the server's object before each persisted write (not the cache's).
			direct, err := client.New(cfg, client.Options{Scheme: opts.Scheme, Mapper: opts.Mapper, HTTPClient: opts.HTTPClient})
			if err != nil {
				return nil, err
			}
			h.check.direct = direct
		}
		return newClient(h, ww), nil
	}
	prevCache := o.NewCache
	if prevCache == nil {
		prevCache = cache.New
	}
	o.NewCache = func(cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
		if h.check != nil {
			var err error
			if opts, err = h.check.cacheOptions(cfg, opts); err != nil {
				return nil, err
			}
		}
		c, err := prevCache(cfg, opts)
		if err != nil {
			return nil, err
		}
		h.scope.Store(newCacheScope(opts))
		bc := newCache(h, c, opts)
		h.cache.Store(bc)
		return bc, nil
	}
}

// Options returns opts for the controller named name with the bridge's queue as NewQueue: the queue
// controller-runtime would have built (its priority queue unless opts.UsePriorityQueue or the manager's
// controller options turn it off), wrapped to report and obey the editor. Without RECONCILE_LAB_BRIDGE, or when
// opts.NewQueue is already set, opts is returned unchanged. name must be the controller's name (builder.Named,
// or the lower-cased kind of For).
//
// request is the controller's request type: reconcile.Request for controller.Options, or a custom type of a
// typed controller (controller.TypedOptions[MyReq]; wrap its reconciler with WrapTyped). Its items are shown in
// the editor as keyText renders them (typed.go).
func Options[request comparable](mgr manager.Manager, name string, opts controller.TypedOptions[request]) controller.TypedOptions[request] {
	h := theHub()
	if h == nil {
		return opts
	}
	h.guardDryRunOnly(mgr)
	if opts.NewQueue != nil {
		return opts
	}
	return optionsFor(h, mgr, name, opts)
}

// optionsFor is Options on hub h.
func optionsFor[request comparable](h *hub, mgr manager.Manager, name string, opts controller.TypedOptions[request]) controller.TypedOptions[request] {
	var global config.Controller
	if mgr != nil {
		global = mgr.GetControllerOptions()
	}
	usePQ := opts.UsePriorityQueue
	if usePQ == nil {
		usePQ = global.UsePriorityQueue
	}
	info := ControllerMsg{
		MaxConcurrentReconciles: effectiveWorkers(opts.MaxConcurrentReconciles, global.MaxConcurrentReconciles),
		ReconciliationTimeoutMs: effectiveTimeout(opts.ReconciliationTimeout, global.ReconciliationTimeout).Milliseconds(),
		LeaderElection:          h.leaderElection.Load() && ptr.Deref(opts.NeedLeaderElection, ptr.Deref(global.NeedLeaderElection, true)),
	}
	info.Name = name // the name given here; the queue takes the one controller-runtime passes to NewQueue
	// ctrl.NewManager made the client before this call: without bridge.Setup it is not the bridge's.
	info.NoSetup = mgr != nil && !h.clientWrapped.Load()
	info.Order = h.noteOptions(name)
	if o, ok := any(opts).(controller.Options); ok {
		o.NewQueue = h.newQueueFunc(ptr.Deref(usePQ, true), info, mgr)
		return any(o).(controller.TypedOptions[request])
	}
	keys := keyTableFor[request](h, name)
	info.RequestType = reflect.TypeFor[request]().String()
	pq := ptr.Deref(usePQ, true)
	opts.NewQueue = func(actual string, rl workqueue.TypedRateLimiter[request]) workqueue.TypedRateLimitingInterface[request] {
		cfg := h.queueConfigFor(pq, info, mgr, actual)
		return newTypedQueue(cfg, rl, keys)
	}
	return opts
}

// nameMismatch is the warning logged when bridge.Options was given another name than the one controller-runtime
// gave the controller ("" when they match or none was given).
func nameMismatch(given, actual string) string {
	if given == "" || given == actual {
		return ""
	}
	return fmt.Sprintf("bridge.Options(mgr, %q, …) is used by the controller controller-runtime named %q: Reconcile Lab shows it as %q (with the reconciler bridge.Wrap got under %q); pass %q to bridge.Options and bridge.Wrap (Named(...), else the lower-cased kind of For) to match", given, actual, actual, given, actual)
}

// NewQueue returns a controller.Options.NewQueue building the queue controller-runtime would have built
// (priority queue or the client-go rate-limited queue per usePriorityQueue, which must match the controller's
// UsePriorityQueue), wrapped for the editor; nil without RECONCILE_LAB_BRIDGE (controller-runtime then builds its
// own). Prefer Options, which reads the setting for you.
func NewQueue(usePriorityQueue bool) func(string, workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	h := theHub()
	if h == nil {
		return nil
	}
	return h.newQueueFunc(usePriorityQueue, ControllerMsg{Order: h.declare()}, nil)
}

func (h *hub) newQueueFunc(usePQ bool, info ControllerMsg, mgr manager.Manager) func(string, workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	return func(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
		cfg := h.queueConfigFor(usePQ, info, mgr, name)
		cfg.limiter = rl
		return newQueue(cfg)
	}
}

// queueConfigFor is the configuration of the queue of the controller controller-runtime named name (warning when
// bridge.Options was given another name).
func (h *hub) queueConfigFor(usePQ bool, info ControllerMsg, mgr manager.Manager, name string) queueConfig {
	cfg := queueConfig{name: name, priorityQueue: usePQ, hub: h, info: info}
	if mgr != nil {
		cfg.log = mgr.GetLogger().WithValues("controller", name)
	}
	if w := nameMismatch(info.Name, name); w != "" {
		if h.queue(info.Name) == nil {
			h.alias(info.Name, name) // Wrap is expected under the same name as Options; pairLocked handles another
		}
		// It works as it is: a hint, not an error (no stack trace in the developer's log), told to the editor too.
		h.log.Info(w)
		cfg.info.Hints = append(append([]string(nil), cfg.info.Hints...), w)
	}
	return cfg
}

// Wrap returns r wrapped to report every reconcile of the controller named name (and to run the editor's
// dry-run steps); r itself without RECONCILE_LAB_BRIDGE. forObject, when given, names the controller's kind in
// the editor (group, version, kind, resource). For a custom request type use WrapTyped.
func Wrap(mgr manager.Manager, name string, r reconcile.Reconciler, forObject ...client.Object) reconcile.Reconciler {
	h := theHub()
	if h == nil {
		return r
	}
	h.guardDryRunOnly(mgr)
	w := newReconciler(h, name, r)
	w.describeFor(mgr, forObject)
	return w
}

// WrapTyped is Wrap for a typed controller: reconcile.TypedReconciler[request], request a custom request type
// (the controller's options go through Options as controller.TypedOptions[request]). Go cannot infer request
// from a reconciler's concrete type, so name it: bridge.WrapTyped[MyReq](mgr, "name", r, &v1.Thing{}).
// For request = reconcile.Request it is Wrap.
func WrapTyped[request comparable](mgr manager.Manager, name string, r reconcile.TypedReconciler[request], forObject ...client.Object) reconcile.TypedReconciler[request] {
	h := theHub()
	if h == nil {
		return r
	}
	h.guardDryRunOnly(mgr)
	return wrapTyped(h, mgr, name, r, forObject...)
}

// wrapTyped is WrapTyped on hub h.
func wrapTyped[request comparable](h *hub, mgr manager.Manager, name string, r reconcile.TypedReconciler[request], forObject ...client.Object) reconcile.TypedReconciler[request] {
	if isRequest[request]() {
		w := newReconciler(h, name, any(r).(reconcile.Reconciler))
		w.describeFor(mgr, forObject)
		return any(w).(reconcile.TypedReconciler[request])
	}
	keys := keyTableFor[request](h, name)
	w := newReconcilerWithKeys(h, name, innerOf(r, keys, name), keys)
	w.describeFor(mgr, forObject)
	return &typedReconciler[request]{w: w, keys: keys}
}

// describeFor names the controller's kind from its For object (group, version, kind, resource), when given.
func (r *Reconciler) describeFor(mgr manager.Manager, forObject []client.Object) {
	if len(forObject) == 0 || mgr == nil {
		return
	}
	gvk, err := mgr.GetClient().GroupVersionKindFor(forObject[0])
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.desc.Group, r.desc.Version, r.desc.Kind = gvk.Group, gvk.Version, gvk.Kind
	if m, err := mgr.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
		r.desc.Resource = m.Resource.Resource
	}
}

// effectiveWorkers is the number of workers controller-runtime starts for a controller: its own
// MaxConcurrentReconciles when above 0, else the manager's (config.Controller) when above 0, else 1. A controller's
// own 1 wins over a manager default of 4.
func effectiveWorkers(own, manager int) int {
	switch {
	case own > 0:
		return own
	case manager > 0:
		return manager
	default:
		return 1
	}
}

// effectiveTimeout is a controller's ReconciliationTimeout as controller-runtime applies it: its own when set
// (non-zero), else the manager's; 0 means none.
func effectiveTimeout(own, manager time.Duration) time.Duration {
	if own != 0 {
		return own
	}
	return manager
}
