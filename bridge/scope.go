package bridge

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// cacheScope is what the manager's cache (cache.Options, recorded by Setup's NewCache) holds of each kind: in which
// namespaces it watches it and with which label and field selectors. A controller sees, and controller-runtime
// queues, only objects of its For kind the cache holds. A key in a namespace the cache does not watch is never
// queued by the controller's own watches, and its reconciler's Get through the cache fails ("unable to get: …
// because of unknown namespace for the cache"), so the editor's commands that add a key by hand (step with force,
// reconcile now, dry-run) refuse such a key with a clear reason instead; an object a selector leaves out is refused
// by the editor (it has the object's labels, the bridge does not).
//
// The scope of a kind follows controller-runtime's defaulting of cache.Options (v0.25 defaultOpts): a ByObject
// entry's Namespaces, else DefaultNamespaces; each namespace's config takes its own selectors, else the ByObject
// entry's Label / Field, else the DefaultNamespaces entry of that namespace, else DefaultLabelSelector /
// DefaultFieldSelector; cluster-scoped objects (and every namespace when no namespace is configured) take the
// ByObject entry's Label / Field, else the Default* selectors.
type cacheScope struct {
	opts cache.Options
	// byKind are the ByObject entries by kind (resolved through opts.Scheme).
	byKind map[schema.GroupVersionKind]cache.ByObject
	// unresolved names a ByObject entry whose kind the scheme cannot tell ("" when every one resolved): it may be
	// any kind's entry, so no kind's scope is known.
	unresolved string
}

// newCacheScope records opts (ByObject keys are resolved to kinds through opts.Scheme, controller-runtime's
// default scheme when unset, as the cache does).
func newCacheScope(opts cache.Options) *cacheScope {
	s := &cacheScope{opts: opts, byKind: map[schema.GroupVersionKind]cache.ByObject{}}
	sch := opts.Scheme
	if sch == nil {
		sch = scheme.Scheme
	}
	for obj, by := range opts.ByObject {
		gvk, err := apiutil.GVKForObject(obj, sch)
		if err != nil {
			s.unresolved = fmt.Sprintf("the kind of its cache.Options.ByObject entry %T is not known (%v)", obj, err)
			continue
		}
		s.byKind[gvk] = by
	}
	return s
}

// kindScope is what the cache holds of one kind, in the protocol's terms (ControllerMsg's Cache* fields).
type kindScope struct {
	namespaces  []string
	label       string
	field       string
	selectors   []CacheSelector
	unknown     string
	perNsConfig bool
}

// selectorString is sel's text ("" for nil or one that selects everything).
func selectorString[S interface {
	Empty() bool
	String() string
}](sel S, isNil bool) string {
	if isNil || sel.Empty() {
		return ""
	}
	return sel.String()
}

func labelText(sel labels.Selector) string { return selectorString(sel, sel == nil) }
func fieldText(sel fields.Selector) string { return selectorString(sel, sel == nil) }

// forKind is the scope of kind gvk. With the kind unknown (bridge.Wrap without its object) it is known only when
// no ByObject entry could be the kind's.
func (s *cacheScope) forKind(gvk schema.GroupVersionKind) kindScope {
	if s == nil {
		return kindScope{}
	}
	if s.unresolved != "" {
		return kindScope{unknown: s.unresolved}
	}
	if gvk.Kind == "" && len(s.byKind) > 0 {
		return kindScope{unknown: "the controller's kind is not known (bridge.Wrap without its object) and cache.Options.ByObject has entries"}
	}
	o := s.opts
	by, hasBy := s.byKind[gvk]
	// The config where no namespace entry applies: cluster-scoped objects, or every namespace when none is set.
	whole := cache.Config{LabelSelector: o.DefaultLabelSelector, FieldSelector: o.DefaultFieldSelector}
	nsMap := o.DefaultNamespaces
	if hasBy {
		if by.Label != nil {
			whole.LabelSelector = by.Label
		}
		if by.Field != nil {
			whole.FieldSelector = by.Field
		}
		if by.Namespaces != nil {
			nsMap = by.Namespaces
		}
	}
	ks := kindScope{label: labelText(whole.LabelSelector), field: fieldText(whole.FieldSelector), namespaces: namespaceList(nsMap)}
	if len(nsMap) == 0 {
		return ks
	}
	for ns, c := range nsMap {
		if c.LabelSelector == nil && hasBy {
			c.LabelSelector = by.Label
		}
		if c.FieldSelector == nil && hasBy {
			c.FieldSelector = by.Field
		}
		if d, ok := o.DefaultNamespaces[ns]; ok && hasBy {
			if c.LabelSelector == nil {
				c.LabelSelector = d.LabelSelector
			}
			if c.FieldSelector == nil {
				c.FieldSelector = d.FieldSelector
			}
		}
		if c.LabelSelector == nil {
			c.LabelSelector = o.DefaultLabelSelector
		}
		if c.FieldSelector == nil {
			c.FieldSelector = o.DefaultFieldSelector
		}
		ks.selectors = append(ks.selectors, CacheSelector{Namespace: ns, Label: labelText(c.LabelSelector), Field: fieldText(c.FieldSelector)})
	}
	slices.SortFunc(ks.selectors, func(a, b CacheSelector) int { return strings.Compare(a.Namespace, b.Namespace) })
	ks.perNsConfig = true
	return ks
}

// announce sets info's Cache* fields to the scope of kind gvk.
func (s *cacheScope) announce(info *ControllerMsg, gvk schema.GroupVersionKind) {
	ks := s.forKind(gvk)
	info.CacheNamespaces, info.CacheLabelSelector, info.CacheFieldSelector, info.CacheScopeUnknown = ks.namespaces, ks.label, ks.field, ks.unknown
	info.CacheSelectors = nil
	if ks.perNsConfig {
		info.CacheSelectors = ks.selectors
	}
}

// namespaceList is the sorted namespaces of a cache.Options namespace map; nil when it is empty or holds
// cache.AllNamespaces (every namespace).
func namespaceList(m map[string]cache.Config) []string {
	if len(m) == 0 {
		return nil
	}
	out := make([]string, 0, len(m))
	for ns := range m {
		if ns == cache.AllNamespaces {
			return nil
		}
		out = append(out, ns)
	}
	slices.Sort(out)
	return out
}

// namespaces is the namespaces the cache watches for kind gvk (nil: every namespace, or not known).
func (s *cacheScope) namespaces(gvk schema.GroupVersionKind) []string {
	return s.forKind(gvk).namespaces
}

// labelSelector is the label selector the cache lists kind gvk with where no namespace entry applies ("" when
// none, or not known).
func (s *cacheScope) labelSelector(gvk schema.GroupVersionKind) string { return s.forKind(gvk).label }

// outsideCache is the reason a key of the controller described by info cannot be reconciled because the cache
// leaves it out: its namespace is not watched, or the field selector the cache lists its namespace with (or the
// kind-wide one) names only metadata.name / metadata.namespace and the key does not match it. "" when it is inside,
// or the scope is unknown. Label selectors need the object's labels, which the bridge does not have for an object
// its cache leaves out: the editor checks those, in the same words.
func outsideCache(info ControllerMsg, key reconcile.Request) string {
	if info.CacheScopeUnknown != "" {
		return ""
	}
	kind := info.Kind
	if kind == "" {
		kind = "objects"
	}
	if key.Namespace != "" && info.CacheNamespaces != nil && !slices.Contains(info.CacheNamespaces, key.Namespace) {
		return fmt.Sprintf("key %s is outside the cache of controller %q: its manager's cache (cache.Options) watches %s only in namespace(s) %s, so controller-runtime never queues it and its reconciler's Get through the cache fails",
			requestKey(key), info.Name, kind, strings.Join(info.CacheNamespaces, ", "))
	}
	field, where := info.CacheFieldSelector, ""
	if key.Namespace != "" && info.CacheSelectors != nil {
		field, where = "", " in namespace "+key.Namespace
		for _, c := range info.CacheSelectors {
			if c.Namespace == key.Namespace || (c.Namespace == "" && field == "") {
				field = c.Field
				if c.Namespace == key.Namespace {
					break
				}
			}
		}
	}
	if field == "" {
		return ""
	}
	sel, err := fields.ParseSelector(field)
	if err != nil {
		return ""
	}
	for _, r := range sel.Requirements() {
		if r.Field != "metadata.name" && r.Field != "metadata.namespace" {
			return "" // not known from the key
		}
	}
	if sel.Matches(fields.Set{"metadata.name": key.Name, "metadata.namespace": key.Namespace}) {
		return ""
	}
	if info.Kind != "" {
		kind = info.Kind + " objects"
	}
	return fmt.Sprintf("key %s is outside the cache of controller %q: its manager's cache (cache.Options) lists %s%s only with field selector %s, which it does not match, so controller-runtime never queues it and its reconciler's Get through the cache finds nothing",
		requestKey(key), info.Name, kind, where, field)
}

// outside is outsideCache for a key of this queue's controller, with info read under q.mu (it changes under it).
func (q *Queue) outside(key reconcile.Request) string {
	if q.custom != nil {
		return "" // a custom request type's key was read by parseKey, which knows only keys the controller queued
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return outsideCache(q.info, key)
}

// parseKey reads a key the editor sent for this controller: "namespace/name" or "name", or, for a controller with
// a custom request type, the text of one of its queued items.
func (q *Queue) parseKey(text string) (reconcile.Request, error) {
	if q.custom == nil {
		return parseKey(text)
	}
	return parseCustomKey(q.custom, q.name, text)
}

// awaitItems is for a key text a controller with a custom request type does not know: before its workers start
// (controller-runtime starts them once its caches synced, so every initial-list item is queued by then) the text
// may still come, so again runs once they started (or the queue shut down) and awaitItems reports true. Otherwise
// (nil queue, reconcile.Request, workers running, queue shut down) it reports false and again never runs.
func (q *Queue) awaitItems(again func()) bool {
	if q == nil || q.custom == nil || q.started.Load() {
		return false
	}
	select {
	case <-q.stopped:
		return false
	default:
	}
	go func() {
		select {
		case <-q.workersStarted:
		case <-q.stopped:
		}
		again()
	}()
	return true
}
