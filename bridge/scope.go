package bridge

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// cacheScope is which namespaces the manager's cache (cache.Options, recorded by Setup's NewCache) watches: a
// controller sees, and controller-runtime queues, only objects of its For kind in those namespaces. A key outside
// them is never queued by the controller's own watches, and its reconciler's Get through the cache fails
// ("unable to get: … because of unknown namespace for the cache"), so the editor's commands that add a key by
// hand (step with force, reconcile now, dry-run) refuse such a key with a clear reason instead.
type cacheScope struct {
	// defaults are DefaultNamespaces (sorted; nil: every namespace).
	defaults []string
	// byKind are the namespaces of ByObject entries that set Namespaces (sorted; nil: every namespace).
	byKind map[schema.GroupVersionKind][]string
	// defaultSelector is DefaultLabelSelector ("" when none); selectors are the label selectors of ByObject
	// entries that set Label (they replace the default for their kind).
	defaultSelector string
	selectors       map[schema.GroupVersionKind]string
}

// newCacheScope records opts' namespaces (ByObject keys are resolved to kinds through opts.Scheme; an entry whose
// kind cannot be resolved is left out).
func newCacheScope(opts cache.Options) *cacheScope {
	s := &cacheScope{defaults: namespaceList(opts.DefaultNamespaces), byKind: map[schema.GroupVersionKind][]string{},
		selectors: map[schema.GroupVersionKind]string{}}
	if opts.DefaultLabelSelector != nil && !opts.DefaultLabelSelector.Empty() {
		s.defaultSelector = opts.DefaultLabelSelector.String()
	}
	for obj, by := range opts.ByObject {
		if opts.Scheme == nil || (by.Namespaces == nil && by.Label == nil) {
			continue
		}
		gvk, err := apiutil.GVKForObject(obj, opts.Scheme)
		if err != nil {
			continue
		}
		if by.Namespaces != nil {
			s.byKind[gvk] = namespaceList(by.Namespaces)
		}
		if by.Label != nil {
			s.selectors[gvk] = by.Label.String()
		}
	}
	return s
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

// namespaces is the namespaces the cache watches for kind gvk (nil: every namespace, or not known). With the kind
// unknown (bridge.Wrap without its object) only DefaultNamespaces can be taken, and only when no ByObject entry
// sets other namespaces.
func (s *cacheScope) namespaces(gvk schema.GroupVersionKind) []string {
	if s == nil {
		return nil
	}
	if gvk.Kind == "" {
		if len(s.byKind) > 0 {
			return nil
		}
		return s.defaults
	}
	if ns, ok := s.byKind[gvk]; ok {
		return ns
	}
	return s.defaults
}

// labelSelector is the label selector the cache lists kind gvk with ("" when none, or not known: the kind unknown
// while a ByObject entry sets one).
func (s *cacheScope) labelSelector(gvk schema.GroupVersionKind) string {
	if s == nil {
		return ""
	}
	if gvk.Kind == "" {
		if len(s.selectors) > 0 {
			return ""
		}
		return s.defaultSelector
	}
	if sel, ok := s.selectors[gvk]; ok {
		return sel
	}
	return s.defaultSelector
}

// outsideCache is the reason a key of the controller described by info cannot be reconciled because its
// namespace is outside the cache ("" when it is inside, the key is cluster-scoped, or the scope is unknown).
func outsideCache(info ControllerMsg, key reconcile.Request) string {
	if key.Namespace == "" || info.CacheNamespaces == nil || slices.Contains(info.CacheNamespaces, key.Namespace) {
		return ""
	}
	kind := info.Kind
	if kind == "" {
		kind = "objects"
	}
	return fmt.Sprintf("key %s is outside the cache of controller %q: its manager's cache (cache.Options) watches %s only in namespace(s) %s, so controller-runtime never queues it and its reconciler's Get through the cache fails",
		requestKey(key), info.Name, kind, strings.Join(info.CacheNamespaces, ", "))
}

// outside is outsideCache for a key of this queue's controller, with info read under q.mu (it changes under it).
func (q *Queue) outside(key reconcile.Request) string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return outsideCache(q.info, key)
}
