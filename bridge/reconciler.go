package bridge

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"
	"strings"
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

	mu         sync.Mutex
	writes     []Write
	secretErrs [][2]string // failed Secret writes' errors: raw, masked (noteSecretError)
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
		end.Panic = panicReport(p, debug.Stack())
		r.finish(q, req, end)
		panic(p)
	}()
	res, err = r.inner.Reconcile(withReconcileInfo(ctx, ri), req)
	completed = true
	end := r.endMsg(name, key, id, start, res, err, false)
	end.Error = ri.maskSecretErrors(end.Error)
	r.finish(q, req, end)
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
		Triggers: []Cause{{Kind: CauseManual, Note: "dry-run step from Reconcile Lab", At: ms(start)}}, At: ms(start)})
	var end *ReconcileEndMsg
	func() {
		defer func() {
			if p := recover(); p != nil {
				end = r.endMsg(name, key, id, start, reconcile.Result{}, nil, true)
				end.Panic = panicReport(p, debug.Stack())
			}
		}()
		res, err := r.inner.Reconcile(withReconcileInfo(ctx, ri), req)
		end = r.endMsg(name, key, id, start, res, err, true)
		end.Error = ri.maskSecretErrors(end.Error)
	}()
	r.hub.send(end)
	ri.mu.Lock()
	writes := append([]Write{}, ri.writes...)
	ri.mu.Unlock()
	return ReplyMsg{OK: true, Reconcile: end, Writes: writes}
}

// bridgePkg is this package's import path, the prefix of its functions in a stack trace.
var bridgePkg = reflect.TypeFor[Reconciler]().PkgPath()

// panicReport is what a reconcile's panic is reported as: the panic value, then the frames of the goroutine's
// stack (debug.Stack, taken in the bridge's deferred recover) from the function that panicked down to the
// reconciler the bridge called: the user's code, without the stack capture, the bridge's recover, the runtime's
// panic machinery, an adapter such as reconcile.Func, and the bridge and controller-runtime frames below. A frame keeps its
// function's name and its file:line (the argument words and the pc offset, which tell the user nothing, are
// dropped). A stack of an unexpected shape is kept whole.
func panicReport(p any, stack []byte) string {
	frames := stackFrames(string(stack))
	start := -1
	for i, f := range frames {
		if strings.HasPrefix(f.fn, "panic(") {
			start = i + 1 // the last one: the first panic, below a re-panic a deferred call of the user's made
		}
	}
	for start >= 0 && start < len(frames) && strings.HasPrefix(frames[start].fn, "runtime.") {
		start++ // runtime.sigpanic, runtime.panicmem, …: how the fault became a panic
	}
	if start < 0 || start >= len(frames) {
		return fmt.Sprintf("%v\n%s", p, stack)
	}
	end := start
	for end < len(frames) && !frames[end].bridge() {
		end++
	}
	for end > start+1 && strings.HasPrefix(frames[end-1].fn, "sigs.k8s.io/controller-runtime/pkg/reconcile.") {
		end-- // reconcile.Func and its like: the adapter the bridge called the user's function through
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%v", p)
	for _, f := range frames[start:end] {
		b.WriteString("\n" + f.name() + "\n\t" + f.at)
	}
	return b.String()
}

// stackFrame is one frame of a goroutine's stack as debug.Stack prints it: "pkg.fn(args…)" and
// "\t/path/file.go:12 +0x1f".
type stackFrame struct{ fn, at string }

// name is the frame's function without its argument words: "pkg.(*T).Reconcile(...)".
func (f stackFrame) name() string {
	if i := strings.LastIndex(f.fn, "("); i > 0 && strings.HasSuffix(f.fn, ")") {
		return f.fn[:i] + "(...)"
	}
	return f.fn
}

// bridge reports whether the frame is the bridge's wrapper of a reconciler (not a user's function that happens
// to live in this package, as in its tests).
func (f stackFrame) bridge() bool {
	rest, ok := strings.CutPrefix(f.fn, bridgePkg+".")
	return ok && (strings.HasPrefix(rest, "(*Reconciler).") || strings.HasPrefix(rest, "innerOf[") || strings.HasPrefix(rest, "(*typedReconciler["))
}

// stackFrames splits a debug.Stack text into its frames (the goroutine header and a "created by" frame
// included as they come; the pc offset dropped from each file:line).
func stackFrames(stack string) []stackFrame {
	lines := strings.Split(strings.TrimRight(stack, "\n"), "\n")
	var out []stackFrame
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "goroutine ") {
			continue
		}
		f := stackFrame{fn: l}
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "\t") {
			at := strings.TrimPrefix(lines[i+1], "\t")
			if j := strings.LastIndex(at, " +0x"); j > 0 {
				at = at[:j]
			}
			f.at = at
			i++
		}
		out = append(out, f)
	}
	return out
}
