package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Check instances: the robustness checks (Sieve / Acto / Anvil style, issue 11) run a second copy of the
// developer's program over copies of their objects in a scratch namespace and perturb what it sees. The program
// is unchanged; the editor sets environment variables (protocol.json "env") and sends commands:
//
//   - RECONCILE_LAB_CHECK_NAMESPACE=ns: the manager's cache watches only ns (every ByObject namespace restriction
//     is replaced by ns too), leader election, metrics and health probes are off (the developer's own instance
//     keeps its lease and ports), and every persisted write through the bridge client is journaled with the
//     object before (read from the API server, not the cache) and after.
//   - RECONCILE_LAB_CHECK_CLUSTER_OBJECT={"group","version","kind","resource","name"} (JSON), with the namespace, for a
//     cluster-scoped primary: the manager's cache sees only that object (the scratch copy) of the kind — a field
//     selector on metadata.name, ANDed with any selector the program set — and it is the one object outside the
//     scratch namespace the instance may write (its status, finalizers, metadata).
//   - RECONCILE_LAB_CHECK_HOLD_AFTER_WRITES=i: writes through the bridge client are serialized; after the i-th
//     successful persisted write every later write blocks before it reaches the server until its context ends.
//     The editor stops the process once it saw write i: a crash right after write i, exactly.
//   - RECONCILE_LAB_CHECK_FREEZE_CACHE_AT=rv: every list of the manager's cache is served at exactly rv
//     (resourceVersionMatch=Exact, from the server's history) and every watch waits until the thaw command; a
//     streaming list (WatchList) is refused while frozen so informers fall back to list + watch. After thaw the
//     watches start from rv and the cache catches up through ordinary events.
//   - RECONCILE_LAB_CHECK_FREEZE_RESOURCES=r1,r2.group (with the freeze): only the lists and watches of these
//     resources are frozen; the other informers list and watch as usual (a child kind lags behind while the
//     primary is current: a child looked up in the cache right after it was created).
//   - commands withhold / release (key, resource): update notifications of that object are not delivered to the
//     cache's handlers (the informer's store still updates); release delivers one coalesced update per handler.
//
// None of this is active without RECONCILE_LAB_BRIDGE, and none of it without the check variables (a plain
// editor session is unaffected).

// checkConfig is the check-instance configuration read from the environment once per process.
type checkConfig struct {
	namespace string
	// clusterObject is the scratch copy of a cluster-scoped primary (nil: the primary is namespaced).
	clusterObject   *clusterObject
	holdAfterWrites int
	freezeAt        string
	// freezeOnly, when not empty, limits the freeze to these resources ("resource" or "resource.group").
	freezeOnly map[string]bool
}

// clusterObject names the scratch copy of a cluster-scoped primary (RECONCILE_LAB_CHECK_CLUSTER_OBJECT).
type clusterObject struct {
	Group    string `json:"group"`
	Version  string `json:"version"`
	Kind     string `json:"kind"`
	Resource string `json:"resource"`
	Name     string `json:"name"`
}

func (c checkConfig) active() bool {
	return c.namespace != "" || c.clusterObject != nil || c.holdAfterWrites > 0 || c.freezeAt != ""
}

// checkConfigFromEnv reads the check variables; a malformed hold count is an error (the check must not run
// unperturbed while believing it perturbs).
func checkConfigFromEnv() (checkConfig, error) {
	c := checkConfig{namespace: os.Getenv(EnvCheckNamespace), freezeAt: os.Getenv(EnvCheckFreezeCacheAt)}
	if s := os.Getenv(EnvCheckHoldAfterWrites); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return c, fmt.Errorf("bridge: %s=%q is not a positive write count", EnvCheckHoldAfterWrites, s)
		}
		c.holdAfterWrites = n
	}
	if s := os.Getenv(EnvCheckFreezeResources); s != "" {
		if c.freezeAt == "" {
			return c, fmt.Errorf("bridge: %s is set without %s", EnvCheckFreezeResources, EnvCheckFreezeCacheAt)
		}
		c.freezeOnly = map[string]bool{}
		for _, r := range strings.Split(s, ",") {
			if r = strings.TrimSpace(r); r != "" {
				c.freezeOnly[r] = true
			}
		}
	}
	if s := os.Getenv(EnvCheckClusterObject); s != "" {
		var o clusterObject
		if err := json.Unmarshal([]byte(s), &o); err != nil || o.Kind == "" || o.Version == "" || o.Resource == "" || o.Name == "" {
			return c, fmt.Errorf("bridge: %s=%q does not name an object (JSON with group, version, kind, resource and name)", EnvCheckClusterObject, s)
		}
		if c.namespace == "" {
			return c, fmt.Errorf("bridge: %s is set without %s", EnvCheckClusterObject, EnvCheckNamespace)
		}
		c.clusterObject = &o
	}
	return c, nil
}

// checkState is the hub's run-time state of a check instance.
type checkState struct {
	cfg checkConfig

	// direct reads objects from the API server (not the cache) for the journaled "before" of persisted writes.
	direct client.Reader

	writeMu sync.Mutex // serializes writes while holdAfterWrites is set
	okCount int

	thawOnce sync.Once
	thawCh   chan struct{}

	wmu      sync.Mutex
	withheld map[string]*withheldKey // resource + " " + key
}

type withheldKey struct {
	count   int
	pending map[*attributing]*pendingUpdate
	order   []*attributing
}

type pendingUpdate struct{ old, latest any }

func newCheckState(cfg checkConfig) *checkState {
	return &checkState{cfg: cfg, thawCh: make(chan struct{}), withheld: map[string]*withheldKey{}}
}

// applyManagerOptions makes o a check instance's options (namespace set): no leader election, no metrics, no
// probes and a webhook server that serves nothing (idleWebhookServer), so the second copy neither competes for the
// developer's lease nor binds their ports, and needs no webhook certificate.
func (s *checkState) applyManagerOptions(o *manager.Options) {
	if s.cfg.namespace == "" {
		return
	}
	o.LeaderElection = false
	o.Metrics.BindAddress = "0"
	o.HealthProbeBindAddress = "0"
	o.PprofBindAddress = ""
	o.WebhookServer = newIdleWebhookServer()
}

// cacheOptions restricts the cache to the check namespace and freezes it when asked.
func (s *checkState) cacheOptions(cfg *rest.Config, opts cache.Options) (cache.Options, error) {
	if ns := s.cfg.namespace; ns != "" {
		opts.DefaultNamespaces = map[string]cache.Config{ns: {}}
		if len(opts.ByObject) > 0 {
			by := make(map[client.Object]cache.ByObject, len(opts.ByObject))
			for k, v := range opts.ByObject {
				if v.Namespaces != nil {
					v.Namespaces = map[string]cache.Config{ns: {}}
				}
				by[k] = v
			}
			opts.ByObject = by
		}
		if o := s.cfg.clusterObject; o != nil {
			served, err := o.servedVersions(cfg, opts)
			if err != nil {
				return opts, err
			}
			if opts, err = o.restrict(opts, served); err != nil {
				return opts, err
			}
		}
	}
	if s.cfg.freezeAt != "" {
		hc := opts.HTTPClient
		if hc == nil {
			var err error
			if hc, err = rest.HTTPClientFor(cfg); err != nil {
				return opts, err
			}
		}
		// A copy: the manager's client shares the original http.Client and must stay unfrozen.
		frozen := *hc
		inner := hc.Transport
		if inner == nil {
			inner = http.DefaultTransport
		}
		frozen.Transport = &freezingTransport{inner: inner, s: s}
		opts.HTTPClient = &frozen
	}
	return opts, nil
}

// restrict makes the cache see only the copy among the objects of its kind: a ByObject entry per version of the
// kind that the program's scheme registers and the server serves (served: the versions the server serves; a
// typed informer each), else one per served version (an unstructured informer), each with metadata.name=<copy>
// ANDed into the entry's field selector (or into the cache's default one, which the entry would otherwise take).
// Other cluster-scoped kinds are not restricted: reading them is harmless, and the write guard keeps the instance
// from writing any of them.
func (o *clusterObject) restrict(opts cache.Options, served []string) (cache.Options, error) {
	sch := opts.Scheme
	if sch == nil {
		sch = scheme.Scheme // what the cache defaults to
	}
	var gvks []schema.GroupVersionKind
	for _, v := range served {
		if gvk := (schema.GroupVersionKind{Group: o.Group, Version: v, Kind: o.Kind}); sch.Recognizes(gvk) {
			gvks = append(gvks, gvk)
		}
	}
	if len(gvks) == 0 {
		for _, v := range served {
			gvks = append(gvks, schema.GroupVersionKind{Group: o.Group, Version: v, Kind: o.Kind})
		}
	}
	by := make(map[client.Object]cache.ByObject, len(opts.ByObject)+len(gvks))
	entries := map[schema.GroupVersionKind]client.Object{}
	for k, v := range opts.ByObject {
		by[k] = v
		if gvk, err := apiutil.GVKForObject(k, sch); err == nil {
			entries[gvk] = k
		}
	}
	name := fields.OneTermEqualSelector("metadata.name", o.Name)
	for _, gvk := range gvks {
		key, ok := entries[gvk]
		if !ok {
			if obj, err := sch.New(gvk); err == nil {
				key, _ = obj.(client.Object)
			}
			if key == nil {
				u := &unstructured.Unstructured{}
				u.SetGroupVersionKind(gvk)
				key = u
			}
		}
		e := by[key]
		base := e.Field
		if base == nil {
			base = opts.DefaultFieldSelector
		}
		if base == nil || base.Empty() {
			e.Field = name
		} else {
			e.Field = fields.AndSelectors(base, name)
		}
		by[key] = e
	}
	opts.ByObject = by
	return opts, nil
}

// servedVersions are the versions of the copy's kind the server serves (through opts.Mapper, else a mapper of
// its own), so that the restriction names no version the cache could not start an informer for.
func (o *clusterObject) servedVersions(cfg *rest.Config, opts cache.Options) ([]string, error) {
	m := opts.Mapper
	if m == nil {
		hc := opts.HTTPClient
		if hc == nil {
			var err error
			if hc, err = rest.HTTPClientFor(cfg); err != nil {
				return nil, err
			}
		}
		var err error
		if m, err = apiutil.NewDynamicRESTMapper(cfg, hc); err != nil {
			return nil, err
		}
	}
	mappings, err := m.RESTMappings(schema.GroupKind{Group: o.Group, Kind: o.Kind})
	if err != nil {
		return nil, fmt.Errorf("bridge: the kind %s of the checked object (%s): %w", o.Kind, EnvCheckClusterObject, err)
	}
	var versions []string
	for _, mp := range mappings {
		if !slices.Contains(versions, mp.GroupVersionKind.Version) {
			versions = append(versions, mp.GroupVersionKind.Version)
		}
	}
	return versions, nil
}

// thaw lets a frozen cache watch; false when it was not frozen.
func (s *checkState) thaw() bool {
	if s.cfg.freezeAt == "" {
		return false
	}
	s.thawOnce.Do(func() { close(s.thawCh) })
	return true
}

func (s *checkState) thawed() bool {
	select {
	case <-s.thawCh:
		return true
	default:
		return false
	}
}

// freezingTransport serves the cache's lists at the frozen resourceVersion and holds its watches until thaw.
type freezingTransport struct {
	inner http.RoundTripper
	s     *checkState
}

var errFrozenWatchList = errors.New("reconcile lab check: the cache is frozen; a streaming list is not served (falling back to list + watch)")

func (t *freezingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.s.thawed() || req.Method != http.MethodGet {
		return t.inner.RoundTrip(req)
	}
	if only := t.s.cfg.freezeOnly; len(only) > 0 && !only[resourceOfPath(req.URL.Path)] {
		return t.inner.RoundTrip(req)
	}
	q := req.URL.Query()
	if w := q.Get("watch"); w == "true" || w == "1" {
		if q.Get("sendInitialEvents") == "true" {
			return nil, errFrozenWatchList
		}
		select {
		case <-t.s.thawCh:
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
		return t.inner.RoundTrip(req)
	}
	if q.Get("continue") != "" {
		return t.inner.RoundTrip(req) // a continued list carries its snapshot in the token
	}
	q.Set("resourceVersion", t.s.cfg.freezeAt)
	q.Set("resourceVersionMatch", "Exact")
	r := req.Clone(req.Context())
	r.URL.RawQuery = q.Encode()
	return t.inner.RoundTrip(r)
}

// resourceOfPath is the resource a list or watch path names, as "resource" for the core group and
// "resource.group" otherwise (/api/v1/namespaces/ns/configmaps → configmaps, /apis/apps/v1/deployments →
// deployments.apps); "" for a path that names none.
func resourceOfPath(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	var group string
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		group, parts = parts[1], parts[3:]
	default:
		return ""
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	if len(parts) == 0 {
		return ""
	}
	if group == "" {
		return parts[0]
	}
	return parts[0] + "." + group
}

// outsideScratch refuses a persisted write of a check instance that is not in its scratch namespace (nil when it
// is, or when this is no check instance with a namespace): the instance runs over copies, and a write elsewhere — a
// Runnable's or a reconciler's write to a fixed namespace, a cluster-scoped object, a DeleteAllOf across
// namespaces — would change the developer's real objects. The refusal is the write's error, so it is journaled
// and the reconcile fails visibly in the check's results; nothing reaches the server.
func (s *checkState) outsideScratch(w *Write) error {
	if s == nil || s.cfg.namespace == "" || w.Namespace == s.cfg.namespace {
		return nil
	}
	if o := s.cfg.clusterObject; o != nil && w.Namespace == "" && w.Verb != "deleteAllOf" && w.Group == o.Group && w.Resource == o.Resource && w.Name == o.Name {
		return nil // the copy of the cluster-scoped primary
	}
	what := w.Resource
	if w.Group != "" {
		what += "." + w.Group
	}
	target := w.Name
	if w.Namespace != "" {
		target = w.Namespace + "/" + w.Name
	} else if w.Verb == "deleteAllOf" {
		target = "(all namespaces)"
	}
	return fmt.Errorf("reconcile lab check: refused %s %s %s: a check instance writes only in its scratch namespace %s (a write elsewhere would change your real objects)", w.Verb, what, target, s.cfg.namespace)
}

// gate runs one persisted write: with holdAfterWrites set, writes are serialized and every write after the
// i-th successful one blocks (never reaching the server) until ctx ends.
func (s *checkState) gate(ctx context.Context, write func() error) error {
	if s == nil || s.cfg.holdAfterWrites == 0 {
		return write()
	}
	s.writeMu.Lock()
	if s.okCount >= s.cfg.holdAfterWrites {
		s.writeMu.Unlock()
		<-ctx.Done()
		return fmt.Errorf("reconcile lab check: held after write %d (the check stops this process here): %w", s.cfg.holdAfterWrites, ctx.Err())
	}
	defer s.writeMu.Unlock()
	err := write()
	if err == nil {
		s.okCount++
	}
	return err
}

func withheldID(resource, key string) string { return resource + " " + key }

// withhold starts holding update notifications of key (namespace/name) of resource (plural.version.group).
func (s *checkState) withhold(resource, key string) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	id := withheldID(resource, key)
	if s.withheld[id] == nil {
		s.withheld[id] = &withheldKey{pending: map[*attributing]*pendingUpdate{}}
	}
}

// holdUpdate records an update for a withheld object and reports whether it was held.
func (s *checkState) holdUpdate(a *attributing, resource string, oldObj, newObj any) bool {
	if s == nil {
		return false
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if len(s.withheld) == 0 {
		return false
	}
	m, err := meta.Accessor(newObj)
	if err != nil {
		return false
	}
	w := s.withheld[withheldID(resource, objectKey(m.GetNamespace(), m.GetName()))]
	if w == nil {
		return false
	}
	w.count++
	if p := w.pending[a]; p != nil {
		p.latest = newObj
	} else {
		w.pending[a] = &pendingUpdate{old: oldObj, latest: newObj}
		w.order = append(w.order, a)
	}
	return true
}

// release stops withholding and delivers one coalesced update per handler that missed some; it returns how many
// notifications were held.
func (s *checkState) release(resource, key string) int {
	s.wmu.Lock()
	id := withheldID(resource, key)
	w := s.withheld[id]
	delete(s.withheld, id)
	s.wmu.Unlock()
	if w == nil {
		return 0
	}
	for _, a := range w.order {
		p := w.pending[a]
		a.deliverUpdate(p.old, p.latest)
	}
	return w.count
}
