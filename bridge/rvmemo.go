package bridge

import (
	"sync"

	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// The "before" resourceVersion of a live write. The journal says a write changed nothing when its resourceVersion
// before equals the one the server answered (before == after); the object a write is made with does not tell that
// reliably: a server-side apply carries no resourceVersion, and a patch built on an object the cache holds one
// write behind carries the older one, so a write that stored nothing read "rv 243 → 246" (246 being the program's
// previous write). So a live write's before is the newest resourceVersion the bridge knows of the object when the
// write is sent, from what the bridge already has — never an extra API request, never a new informer:
//
//   - the resourceVersion the server answered to the bridge's last write of the object, or a newer one an event of
//     an informer the program started showed since (rvMemo, below: the hub's, fed by the client and the cache);
//   - for an object the bridge has not written yet (nothing noted), the one the program's cache holds, only from an
//     informer the program itself started (cachedRV: one cache read per object, not per write);
//   - the one the written object carries.
//
// The contract this gives: before == after means the server stored nothing. Every candidate was observed before the
// write was sent, and a write that stores something gets a resourceVersion the object never had, so no choice among
// the candidates can make a write that changed the object read as a no-op; picking an older candidate only makes a
// no-op read as a change (what the journal did before). An update that names a resourceVersion (optimistic
// locking: the server refuses it unless the object has exactly that one) is journaled with that one.
//
// Which candidate is newest: the server's resourceVersions are compared as apimachinery's comparable resource
// versions (KEP-5504) define them: for objects of one resource, a well-formed resourceVersion (a decimal integer without leading zeros) is
// ordered like the number (resourceversion.CompareResourceVersion; kube-apiserver's are etcd revisions, which only
// grow). A candidate that is not well formed (an aggregated API server may use other strings) is not compared: the
// bridge's own last write then wins over the cache, and the cache over the object the write was made with.

// rvMemoGeneration bounds rvMemo: it keeps at most two generations of this many objects.
const rvMemoGeneration = 4096

// objectRef names one object for rvMemo: its API group and kind (every version of a kind is the same object, and
// the status subresource shares its resourceVersion), namespace ("" for a cluster-scoped kind) and name.
type objectRef struct{ group, kind, namespace, name string }

// refOf is the object w writes; ok is false when its kind or name is unknown (nothing is looked up or noted then).
func refOf(w *Write) (objectRef, bool) {
	return objectRef{w.Group, w.Kind, w.Namespace, w.Name}, w.Kind != "" && w.Name != ""
}

// rvMemo is the newest resourceVersion known of each object the bridge wrote live, bounded: when
// the current generation holds rvMemoGeneration objects it becomes the previous one and the one before is
// dropped (an object not written for that long is looked up in the cache only). Safe for concurrent use; each
// call takes one short lock.
type rvMemo struct {
	mu        sync.Mutex
	cur, prev map[objectRef]string
}

// get is the resourceVersion noted for ref, "" when none is.
func (m *rvMemo) get(ref objectRef) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if rv, ok := m.cur[ref]; ok {
		return rv
	}
	return m.prev[ref]
}

// note records rv as the newest resourceVersion of ref, unless the one noted is newer (two writes of one object
// whose answers arrive out of order); when the two cannot be compared, the later observation (rv) wins.
func (m *rvMemo) note(ref objectRef, rv string) {
	if rv == "" {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.cur[ref]
	if !ok {
		old = m.prev[ref]
	}
	if old != "" && old != rv {
		if c, err := resourceversion.CompareResourceVersion(old, rv); err == nil && c > 0 {
			return
		}
	}
	if m.cur == nil {
		m.cur = make(map[objectRef]string)
	}
	if _, ok := m.cur[ref]; !ok && len(m.cur) >= rvMemoGeneration {
		m.prev, m.cur = m.cur, make(map[objectRef]string, rvMemoGeneration)
	}
	m.cur[ref] = rv
}

// seen notes rv, from an informer event of ref, when the bridge noted ref (an object it never wrote is not added:
// the memo grows with writes only) and rv is newer by CompareResourceVersion. An informer event may arrive after the
// answer to a later write, so an older or incomparable rv is ignored.
func (m *rvMemo) seen(ref objectRef, rv string) {
	if rv == "" {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	gen := m.cur
	old, ok := gen[ref]
	if !ok {
		gen = m.prev
		if old, ok = gen[ref]; !ok {
			return
		}
	}
	if c, err := resourceversion.CompareResourceVersion(old, rv); err == nil && c < 0 {
		gen[ref] = rv
	}
}

// forget drops ref (the object was deleted, by the bridge or as an informer saw: a new one of the same name has its
// own resourceVersions).
func (m *rvMemo) forget(ref objectRef) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.cur, ref)
	delete(m.prev, ref)
}

// newerRV is the newer of two resourceVersions of one object: the other when one is "", b when b is newer by
// CompareResourceVersion, else a (also when they cannot be compared: the caller passes the one it trusts more as a).
func newerRV(a, b string) string {
	if a == "" {
		return b
	}
	if b == "" || a == b {
		return a
	}
	if c, err := resourceversion.CompareResourceVersion(a, b); err == nil && c < 0 {
		return b
	}
	return a
}
