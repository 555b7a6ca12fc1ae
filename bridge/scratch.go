package bridge

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	toolscache "k8s.io/client-go/tools/cache"
)

// The robustness checks' scratch copies (protocol.json "scratch"; the editor's src/core/checks/scratch.ts): the
// checks copy the developer's objects into namespaces whose names start with ScratchNamespacePrefix, and label each
// scratch namespace and cluster-scoped copy with ScratchLabel.
const (
	ScratchNamespacePrefix = "rl-check-"
	ScratchLabel           = "checks.reconcile-lab.dev/scratch"
)

// isScratchCopy reports whether an informer event's object (or the final state a DeletedFinalStateUnknown carries)
// is a scratch copy: it lives in a scratch namespace, or carries ScratchLabel (a scratch namespace, a cluster-scoped
// copy). Anything that is not an object is not one.
func isScratchCopy(obj any) bool {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	if strings.HasPrefix(m.GetNamespace(), ScratchNamespacePrefix) {
		return true
	}
	_, labelled := m.GetLabels()[ScratchLabel]
	return labelled
}

// hidesScratchCopies reports whether the program's event handlers must not see the checks' scratch copies: it is
// the developer's own instance attached to the editor (not a check instance, which reconciles exactly those). Such an
// instance usually watches every namespace; were the copies delivered, its queue would hold their keys (and, running,
// it would reconcile them while the checks compare what their own instance did), as the editor's built-in loop
// would without its event filter. The informer still caches them: only the handlers (and so the queue) skip them.
func (h *hub) hidesScratchCopies() bool { return h.check == nil }
