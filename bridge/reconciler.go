package bridge

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Reconciler wraps a controller's reconciler: it reports the start and end of every reconcile (controller-runtime's
// reconcile ID, the causes that queued the key, result, error and whether it is terminal, a panic, the duration),
// tags the writes made through the bridge client during it, and runs dry-run steps for the editor.
//
// Contracts: the inner reconciler's result and error are returned unchanged; a panic is reported and then
// re-panicked with the same value, so controller-runtime's own recovery (RecoverPanic) behaves as without the
// bridge.
type Reconciler struct {
	name  string
	inner reconcile.Reconciler
	hub   *hub
	// custom reads the editor's key texts when the controller has a custom request type (typed.go); nil for
	// reconcile.Request.
	custom keyResolver

	mu   sync.Mutex
	desc ControllerMsg
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

func newReconciler(h *hub, name string, inner reconcile.Reconciler) *Reconciler {
	return newReconcilerWithKeys(h, name, inner, nil)
}

// newReconcilerWithKeys is newReconciler for a controller whose keys custom reads (nil: reconcile.Request).
func newReconcilerWithKeys(h *hub, name string, inner reconcile.Reconciler, custom keyResolver) *Reconciler {
	r := &Reconciler{name: name, inner: inner, hub: h, custom: custom}
	h.registerReconciler(r)
	return r
}

// parseKey reads a key the editor sent for this reconciler's controller (as Queue.parseKey).
func (r *Reconciler) parseKey(text string) (reconcile.Request, error) {
	if r.custom == nil {
		return parseKey(text)
	}
	return parseCustomKey(r.custom, r.name, text)
}

// describe copies what the reconciler side knows about its controller into an announcement.
func (r *Reconciler) describe(m *ControllerMsg) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m.Group == "" && m.Kind == "" {
		m.Group, m.Version, m.Kind, m.Resource = r.desc.Group, r.desc.Version, r.desc.Kind, r.desc.Resource
	}
}

// reconcileInfo is carried in the reconcile's context: the bridge client tags writes with it, and in a dry run
// forces DryRunAll and collects the planned writes.
type reconcileInfo struct {
	controller, key, id string
	dryRun              bool

	mu     sync.Mutex
	writes []Write
}

type reconcileInfoKey struct{}

func withReconcileInfo(ctx context.Context, ri *reconcileInfo) context.Context {
	return context.WithValue(ctx, reconcileInfoKey{}, ri)
}

func reconcileInfoFrom(ctx context.Context) *reconcileInfo {
	ri, _ := ctx.Value(reconcileInfoKey{}).(*reconcileInfo)
	return ri
}

// IsDryRun reports whether ctx belongs to a dry-run step from the editor: every write through the bridge client
// is then sent with dryRun=All. A reconciler with side effects outside the API server (calls to external
// systems) should skip them when this is true.
func IsDryRun(ctx context.Context) bool {
	ri := reconcileInfoFrom(ctx)
	return ri != nil && ri.dryRun
}

// Reconcile runs the wrapped reconciler and reports it.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (res reconcile.Result, err error) {
	id := string(controller.ReconcileIDFromContext(ctx))
	key := requestKey(req)
	q := r.hub.queueOf(r.name)
	if q != nil && q.name != r.name && !r.hub.confirmPair(r.name, q, req) {
		q = nil
	}
	name := r.name
	if q != nil {
		name = q.name // the name controller-runtime gave the controller, if bridge.Options was given another
	}
	ri := &reconcileInfo{controller: name, key: key, id: id}
	start := r.hub.clock.Now()
	if m := (&ReconcileStartMsg{Controller: name, Key: key, ReconcileID: id, At: ms(start)}); q != nil {
		q.reconcileStarted(req, m) // in the queue's order, after the hand-out
	} else {
		m.Triggers = []Cause{}
		r.hub.send(m)
	}
	completed := false
	defer func() {
		if completed {
			return
		}
		p := recover()
		end := r.endMsg(name, key, id, start, reconcile.Result{}, nil, false)
		end.Panic = fmt.Sprintf("%v\n%s", p, debug.Stack())
		r.finish(q, req, end)
		panic(p)
	}()
	res, err = r.inner.Reconcile(withReconcileInfo(ctx, ri), req)
	completed = true
	r.finish(q, req, r.endMsg(name, key, id, start, res, err, false))
	return res, err
}

func (r *Reconciler) finish(q *Queue, req reconcile.Request, end *ReconcileEndMsg) {
	if q != nil {
		q.reconcileEnded(req, end) // in the queue's order: before the re-add its result causes
	} else {
		r.hub.send(end)
	}
}

func (r *Reconciler) endMsg(controller, key, id string, start time.Time, res reconcile.Result, err error, dryRun bool) *ReconcileEndMsg {
	now := r.hub.clock.Now()
	end := &ReconcileEndMsg{Controller: controller, Key: key, ReconcileID: id, DurationMs: now.Sub(start).Milliseconds(), DryRun: dryRun, At: ms(now)}
	if res.RequeueAfter > 0 || res.Requeue || res.Priority != nil { //nolint:staticcheck // Requeue is still honoured by controller-runtime
		end.Result = &Result{RequeueAfterMs: res.RequeueAfter.Milliseconds(), Requeue: res.Requeue, Priority: res.Priority} //nolint:staticcheck
	}
	if err != nil {
		end.Error = err.Error()
		end.Terminal = errors.Is(err, reconcile.TerminalError(nil))
	}
	return end
}

// dryRun runs the reconciler once for key outside the queue with every write forced to dryRun=All, and replies
// with the outcome and the planned writes. It refuses when the manager's client is not the bridge client (the
// writes could not be forced to dry run).
func (r *Reconciler) dryRun(ctx context.Context, req reconcile.Request) (reply ReplyMsg) {
	if !r.hub.clientWrapped.Load() {
		return ReplyMsg{Error: "dry run needs the bridge client: call bridge.Setup(&options) before ctrl.NewManager"}
	}
	key := requestKey(req)
	id := "dryrun-" + randomID()
	name := r.hub.controllerOf(r.name)
	ri := &reconcileInfo{controller: name, key: key, id: id, dryRun: true}
	start := r.hub.clock.Now()
	r.hub.send(&ReconcileStartMsg{Controller: name, Key: key, ReconcileID: id, DryRun: true,
		Triggers: []Cause{{Kind: CauseManual, Note: "dry-run step from the editor", At: ms(start)}}, At: ms(start)})
	var end *ReconcileEndMsg
	func() {
		defer func() {
			if p := recover(); p != nil {
				end = r.endMsg(name, key, id, start, reconcile.Result{}, nil, true)
				end.Panic = fmt.Sprintf("%v\n%s", p, debug.Stack())
			}
		}()
		res, err := r.inner.Reconcile(withReconcileInfo(ctx, ri), req)
		end = r.endMsg(name, key, id, start, res, err, true)
	}()
	r.hub.send(end)
	ri.mu.Lock()
	writes := append([]Write{}, ri.writes...)
	ri.mu.Unlock()
	return ReplyMsg{OK: true, Reconcile: end, Writes: writes}
}
