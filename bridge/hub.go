package bridge

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// outBuffer bounds the messages waiting for the editor; beyond it messages are dropped and counted
// (Dropped, and "dropped" in a snapshot). ctrlBuffer is the extra room of replies and controller announcements,
// so a burst of transitions never drops a reply.
const (
	outBuffer  = 16384
	ctrlBuffer = 1024
)

// The connection writer's states (hub.writer).
const (
	writerNone int32 = iota
	writerRunning
	writerWriting
)

// hub is the process-wide side of the bridge: the controllers' queues and reconcilers, the outgoing buffers and
// the editor's commands. One hub exists per process when RECONCILE_LAB_BRIDGE is set (see Enabled); tests build
// their own.
type hub struct {
	address, token, instance string
	clock                    clock.Clock
	log                      logr.Logger

	// box holds every outgoing message in send order (outbox.go).
	box *outbox
	// keyIDs hands out the key ids of transitions frames: generation << 32 | the last id given in it. The
	// connection's writer starts a generation per connection and after each keysReset (encode.go); the queues
	// assign a key its id once per generation and keep it with the key's state (keyState.wire).
	keyIDs atomic.Uint64
	// stamps times the hot queue transitions (now.go); the writer keeps it fresh while it is busy.
	stamps stampClock
	// writer is what the connection's writer is doing: writerNone (no connection), writerRunning (taking,
	// folding, encoding or waiting for records), writerWriting (inside a write to the editor). A producer that
	// finds a queue's op log full waits a little for a running writer, never for one stuck in a write.
	writer atomic.Int32

	clientWrapped  atomic.Bool
	leaderElection atomic.Bool
	// dryRunOnly: a dry-run process (EnvDryRunOnly, dryrunonly.go). Set before the hub is shared, then only read.
	dryRunOnly bool
	// exit ends the process (os.Exit; tests replace it).
	exit func(code int)
	// scope is the manager cache's namespaces (scope.go), set by Setup's NewCache; nil without it.
	scope atomic.Pointer[cacheScope]
	// cache is the manager's cache as Setup's NewCache wrapped it (cacheGet reads it); nil without it.
	cache atomic.Pointer[bridgeCache]
	// rvs is the newest resourceVersion known of each object the bridge client wrote (rvmemo.go): the journal's
	// before of a live write. The client notes its answers, the cache's informer events keep them current.
	rvs rvMemo

	// check is the check-instance state (checks.go); nil in a plain editor session.
	check *checkState

	mu          sync.Mutex
	queues      []*Queue
	reconcilers map[string]*Reconciler
	// wrappedAs and controllerNamed pair a controller (the name controller-runtime gave it) with the name its
	// reconciler was wrapped under when they differ: a Wrap under that name then reports as the controller, and
	// commands for the controller find its reconciler (see alias). optionsNames: every name bridge.Options was
	// given, with its place among the process's Options and NewQueue calls (1 = the first; see declare).
	// declared: how many such calls gave a place. Guarded by mu.
	wrappedAs, controllerNamed map[string]string
	optionsNames               map[string]int
	declared                   int
	// guessed: reconciler names pairLocked paired by elimination; the first reconcile confirms or undoes each
	// (Reconciler.Reconcile).
	guessed map[string]bool
	// customKeys: the key table (*keyTable[T], typed.go) of each controller with a custom request type, by name.
	customKeys map[string]any
	pauseAll   bool
	welcomedCh chan struct{}
	welcomed   bool

	cancel  context.CancelFunc
	stopped chan struct{}
}

func newHub(address, token string, clk clock.Clock) *hub {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &hub{
		address:         address,
		token:           token,
		instance:        randomID(),
		clock:           clk,
		log:             logf.Log.WithName("reconcile-lab-bridge"),
		box:             newOutbox(outBuffer),
		reconcilers:     map[string]*Reconciler{},
		wrappedAs:       map[string]string{},
		controllerNamed: map[string]string{},
		optionsNames:    map[string]int{},
		guessed:         map[string]bool{},
		customKeys:      map[string]any{},
		welcomedCh:      make(chan struct{}),
		stopped:         make(chan struct{}),
	}
}

// start connects in the background and waits up to wait for the first welcome (so "start paused" applies before
// the controllers start). It returns whether the editor welcomed this process in time.
func (h *hub) start(wait time.Duration) bool {
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go h.run(ctx)
	select {
	case <-h.welcomedCh:
		return true
	case <-time.After(wait):
		return false
	}
}

// close stops the connection loop and waits for it.
func (h *hub) close() {
	if h.cancel != nil {
		h.cancel()
		<-h.stopped
	}
}

var (
	defaultOnce sync.Once
	defaultHub  *hub
)

// Enabled reports whether this process runs under Reconcile Lab (RECONCILE_LAB_BRIDGE is set). When it is not,
// every factory of this package returns controller-runtime's stock object. The first call connects to the editor
// (waiting up to 3 s for its welcome).
func Enabled() bool { return theHub() != nil }

func theHub() *hub {
	defaultOnce.Do(func() {
		addr := os.Getenv(EnvAddress)
		if addr == "" {
			return
		}
		defaultHub = newHub(addr, os.Getenv(EnvToken), nil)
		cfg, err := checkConfigFromEnv()
		if err != nil {
			// A check instance that cannot apply its perturbation must not run as if it did.
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if cfg.active() {
			defaultHub.check = newCheckState(cfg)
		}
		defaultHub.dryRunOnly = os.Getenv(EnvDryRunOnly) != ""
		if !defaultHub.start(3 * time.Second) {
			defaultHub.log.Info("the editor did not answer in time; continuing and retrying in the background", "address", addr)
		}
	})
	return defaultHub
}

// Dropped is the number of messages dropped because the editor did not read them fast enough (or was absent).
func Dropped() int64 {
	if h := theHub(); h != nil {
		return h.box.dropped.Load()
	}
	return 0
}

func (h *hub) logf(format string, args ...any) { h.log.Info(fmt.Sprintf(format, args...)) }

// send queues a message (a pointer to one of the *Msg structs) for the editor without ever blocking; when the
// outbox is full it is dropped and counted.
func (h *hub) send(m any) {
	r := record{kind: recMsg, msg: m}
	h.box.push(&r, nil, 0)
}

// sendCtrl is send for replies and announcements (they have ctrlBuffer more room).
func (h *hub) sendCtrl(m any) {
	r := record{kind: recMsg, msg: m}
	h.box.push(&r, nil, ctrlBuffer)
}

func (h *hub) reply(r ReplyMsg) { h.sendCtrl(&r) }

// snapshot answers a snapshot command with the state of its controllers' queues at one instant of their order:
// the editor rebuilds a queue's state from the reply and then applies the transitions it reads after it, so a
// transition sorted before the reply must be in it and one missing from it must sort after it. Every target
// queue is gated (no hot op slips past the fold, oplog.go's handshake) and locked at once while their states are
// read, and the reply is pushed (its number taken) before any of them is unlocked: a transition not in the reply
// is pushed after it, so it has a larger number and no take can hand it out before the reply (outbox.take takes
// the hub's own spool last). Queue locks are only ever held together here (taken in registration order).
func (h *hub) snapshot(c CommandMsg, all bool) {
	h.mu.Lock()
	var targets []*Queue
	for _, q := range h.queues {
		if all || q.name == c.Controller {
			targets = append(targets, q)
		}
	}
	h.mu.Unlock()
	for _, q := range targets {
		q.mu.Lock()
		q.gated.Store(true) // before the fold (oplog.go)
		q.lockedFold()
	}
	ctrls := make([]any, 0, len(targets))
	for _, q := range targets {
		ctrls = append(ctrls, q.lockedSnapshot())
	}
	h.sendCtrl(&ReplyMsg{ID: c.ID, OK: true, Snapshot: map[string]any{"controllers": ctrls, "dropped": h.box.dropped.Load()}})
	for _, q := range targets {
		q.lockedRegate()
		q.mu.Unlock()
	}
}

// register adds a controller's queue, announces it and returns whether it starts paused.
func (h *hub) register(q *Queue) bool {
	h.mu.Lock()
	paused := h.pauseAll
	info := q.info
	info.Paused = paused
	r := h.reconcilerLocked(q.name)
	if r == nil {
		var hint string
		if r, hint = h.pairLocked(q); hint != "" {
			info.Hints = append(append([]string(nil), info.Hints...), hint)
		}
	}
	if r != nil {
		r.describe(&info)
	}
	info.Declared = h.declared
	gvk := schema.GroupVersionKind{Group: info.Group, Version: info.Version, Kind: info.Kind}
	h.scope.Load().announce(&info, gvk)
	// q.info is set before q is visible in h.queues (announcements reads it under q.mu only).
	q.info = info
	h.queues = append(h.queues, q)
	h.mu.Unlock()
	h.sendCtrl(&info)
	return paused
}

func (h *hub) unregister(q *Queue) {
	h.box.retire(q)
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, x := range h.queues {
		if x == q {
			h.queues = append(h.queues[:i], h.queues[i+1:]...)
			return
		}
	}
}

func (h *hub) registerReconciler(r *Reconciler) {
	h.mu.Lock()
	h.reconcilers[r.name] = r
	h.mu.Unlock()
}

// queue is the live queue of a controller (nil when none).
func (h *hub) queue(name string) *Queue {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.queueLocked(name)
}

func (h *hub) queueLocked(name string) *Queue {
	for i := len(h.queues) - 1; i >= 0; i-- {
		if h.queues[i].name == name {
			return h.queues[i]
		}
	}
	return nil
}

// queueOf is the live queue of the controller a reconciler wrapped under name reconciles for (nil when none): the
// controller of that name, else the one it was paired with (alias).
func (h *hub) queueOf(name string) *Queue {
	h.mu.Lock()
	defer h.mu.Unlock()
	if q := h.queueLocked(name); q != nil {
		return q
	}
	if actual, ok := h.controllerNamed[name]; ok {
		return h.queueLocked(actual)
	}
	return nil
}

// controllerOf is the controller name a reconciler wrapped under name reports as (see queueOf).
func (h *hub) controllerOf(name string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if actual, ok := h.controllerNamed[name]; ok && h.reconcilers[actual] == nil {
		return actual
	}
	return name
}

// reconcilerLocked is the reconciler of the controller controller-runtime named name: wrapped under that name, else
// under the name it was paired with. The caller holds h.mu.
func (h *hub) reconcilerLocked(name string) *Reconciler {
	if r := h.reconcilers[name]; r != nil {
		return r
	}
	if wrapped, ok := h.wrappedAs[name]; ok {
		return h.reconcilers[wrapped]
	}
	return nil
}

// alias pairs the controller controller-runtime named actual with the reconciler wrapped under wrapped.
func (h *hub) alias(wrapped, actual string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.aliasLocked(wrapped, actual)
}

func (h *hub) aliasLocked(wrapped, actual string) {
	h.wrappedAs[actual] = wrapped
	h.controllerNamed[wrapped] = actual
}

// confirmPair settles a pair pairLocked guessed for the reconciler wrapped under name, at its first reconcile of item
// with q the paired queue: a reconcile of that controller always follows q's hand-out of item, so when q is not
// processing item the guess was wrong (an unbridged queue's reconciler paired with a bridged queue whose reconciler
// is not wrapped), and the pair is undone. Reports whether q is the reconciler's queue.
func (h *hub) confirmPair(name string, q *Queue, item reconcile.Request) bool {
	h.mu.Lock()
	guess := h.guessed[name]
	h.mu.Unlock()
	if !guess {
		return true
	}
	ok := q.isProcessing(item)
	h.mu.Lock()
	if !h.guessed[name] { // another reconcile settled it meanwhile
		paired := h.controllerNamed[name] == q.name
		h.mu.Unlock()
		return paired
	}
	delete(h.guessed, name)
	if ok {
		h.mu.Unlock()
		return true
	}
	delete(h.wrappedAs, h.controllerNamed[name])
	delete(h.controllerNamed, name)
	h.mu.Unlock()
	// The announcement named the reconciler's kind: announce the controller again without it.
	q.mu.Lock()
	hint := fmt.Sprintf("bridge.Wrap(mgr, %q, …) is not the reconciler of controller %q after all (its first reconcile was not one of that queue's): it is shown alone; pass the controller's name to both bridge.Options and bridge.Wrap", name, q.name)
	q.info.Group, q.info.Version, q.info.Kind, q.info.Resource = "", "", "", ""
	q.info.Hints = append(append([]string(nil), q.info.Hints...), hint)
	q.forObj = forType{}
	info := q.info
	info.Paused = q.paused
	q.mu.Unlock()
	h.sendCtrl(&info)
	h.log.Info(hint)
	return false
}

// noteOptions records a name bridge.Options was given and returns its controller's place in the program (see
// declare): a name given again keeps its first place.
func (h *hub) noteOptions(name string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if o := h.optionsNames[name]; o > 0 {
		return o
	}
	h.declared++
	h.optionsNames[name] = h.declared
	return h.declared
}

// declare returns the place of a controller whose queue comes from bridge.NewQueue (no name): the next one.
// Places count the bridge.Options and bridge.NewQueue calls of the process in the order the program made them,
// which is the order it sets its controllers up (all before the manager starts them, while the manager starts
// them in parallel, so the order of their announcements is not the program's).
func (h *hub) declare() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.declared++
	return h.declared
}

// pairLocked finds the reconciler of queue q, which none is wrapped under its name or its bridge.Options name:
// when exactly one Options name has no reconciler of that name (q's) and exactly one reconciler matches neither
// an Options name nor a controller, Wrap was given a different name than Options for that controller (every
// Options and Wrap call of a manager happens before it starts its controllers, so the sets are complete), and the
// two are paired, with a hint (in the log, and returned for the announcement). Anything ambiguous is left unpaired
// (nil, ""). The caller holds h.mu.
func (h *hub) pairLocked(q *Queue) (*Reconciler, string) {
	var options []string
	for n := range h.optionsNames {
		if h.reconcilers[n] == nil && h.wrappedAs[n] == "" {
			options = append(options, n)
		}
	}
	given := q.info.Name
	if len(options) != 1 || (options[0] != given && options[0] != q.name) {
		return nil, ""
	}
	var lone []*Reconciler
	for n, r := range h.reconcilers {
		if h.optionsNames[n] == 0 && h.controllerNamed[n] == "" && h.queueLocked(n) == nil {
			lone = append(lone, r)
		}
	}
	if len(lone) != 1 {
		return nil, ""
	}
	r := lone[0]
	h.aliasLocked(r.name, q.name)
	h.guessed[r.name] = true
	if given == "" {
		given = q.name
	}
	hint := fmt.Sprintf("bridge.Wrap(mgr, %q, …) and bridge.Options(mgr, %q, …) name one controller differently: Reconcile Lab shows them together as %q; pass %q to both", r.name, given, q.name, q.name)
	h.log.Info(hint)
	return r, hint
}

// welcome applies the editor's welcome: paused=true pauses every controller, now and those built later.
func (h *hub) welcome(w WelcomeMsg) {
	h.mu.Lock()
	if w.Paused {
		h.pauseAll = true
	}
	queues := append([]*Queue{}, h.queues...)
	first := !h.welcomed
	h.welcomed = true
	h.mu.Unlock()
	if w.Paused {
		for _, q := range queues {
			q.setPausedQuiet(true)
		}
	}
	if first {
		close(h.welcomedCh)
	}
}

// announcements are the controller messages sent after each welcome (current pause state).
func (h *hub) announcements() []any {
	h.mu.Lock()
	queues := append([]*Queue{}, h.queues...)
	declared := h.declared
	h.mu.Unlock()
	out := make([]any, 0, len(queues))
	for _, q := range queues {
		q.mu.Lock()
		info := q.info
		info.Paused = q.paused
		q.mu.Unlock()
		info.Declared = declared
		out = append(out, &info)
	}
	if c := h.cache.Load(); c != nil {
		if m := c.informersMsg(); len(m.Resources) > 0 {
			out = append(out, m)
		}
	}
	return out
}

// parseKey reads "namespace/name" or "name".
func parseKey(s string) (reconcile.Request, error) {
	if s == "" {
		return reconcile.Request{}, fmt.Errorf("a key is required")
	}
	ns, name, ok := strings.Cut(s, "/")
	if !ok {
		return reconcile.Request{NamespacedName: types.NamespacedName{Name: s}}, nil
	}
	if name == "" || strings.Contains(name, "/") {
		return reconcile.Request{}, fmt.Errorf("key %q is not namespace/name", s)
	}
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}, nil
}

// awaitWorkers waits up to d for the workers of every controller to start (their first Get: controller-runtime
// starts them once the controller's watches synced); it returns the name of one that has not started by then, or "".
func (h *hub) awaitWorkers(d time.Duration) string {
	h.mu.Lock()
	queues := slices.Clone(h.queues)
	h.mu.Unlock()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for _, q := range queues {
		select {
		case <-q.workersStarted:
		case <-timer.C:
			return q.name
		}
	}
	return ""
}

// keyed executes a step, reset backoff or reconcile now for q. A key text a controller with a custom request type
// does not know yet is read again once its workers started (mayWait), off the connection's goroutine.
func (h *hub) keyed(c CommandMsg, q *Queue, reply func(ReplyMsg), fail func(string, ...any), mayWait bool) {
	hasKey := c.Key != ""
	var key reconcile.Request
	if hasKey || c.Op == OpReconcileNow {
		k, err := q.parseKey(c.Key)
		if err != nil && mayWait && q.awaitItems(func() { h.keyed(c, q, reply, fail, false) }) {
			return
		}
		if err != nil {
			fail("%v", err)
			return
		}
		key = k
	}
	if hasKey && (c.Force || c.Op == OpReconcileNow) {
		if why := q.outside(key); why != "" {
			fail("%s", why)
			return
		}
	}
	switch c.Op {
	case OpStep:
		q.Step(key, hasKey, c.Force, c.ID, reply)
	case OpResetBackoff:
		q.ResetBackoff(key, hasKey)
		reply(ReplyMsg{OK: true})
	case OpReconcileNow:
		q.ReconcileNow(key)
		reply(ReplyMsg{OK: true})
	}
}

// handle executes one editor command; exactly one reply is sent (at once, or when a step/dry-run ends).
func (h *hub) handle(c CommandMsg) {
	reply := func(r ReplyMsg) {
		r.ID = c.ID
		h.reply(r)
	}
	fail := func(format string, args ...any) { reply(ReplyMsg{Error: fmt.Sprintf(format, args...)}) }
	all := c.Controller == "" || c.Controller == "*"
	switch c.Op {
	case OpPause, OpResume:
		p := c.Op == OpPause
		var targets []*Queue
		h.mu.Lock()
		if all {
			h.pauseAll = p
			targets = append(targets, h.queues...)
		}
		h.mu.Unlock()
		if !all {
			q := h.queue(c.Controller)
			if q == nil {
				fail("no controller named %q", c.Controller)
				return
			}
			targets = []*Queue{q}
		}
		for _, q := range targets {
			q.setPaused(p)
		}
		reply(ReplyMsg{OK: true})
	case OpSnapshot:
		h.snapshot(c, all)
	case OpStep, OpResetBackoff, OpReconcileNow:
		q := h.queue(c.Controller)
		if q == nil {
			fail("no controller named %q", c.Controller)
			return
		}
		h.keyed(c, q, reply, fail, true)
	case OpThaw:
		if h.check == nil || !h.check.thaw() {
			fail("the cache is not frozen (%s is not set)", EnvCheckFreezeCacheAt)
			return
		}
		reply(ReplyMsg{OK: true})
	case OpWithhold, OpRelease:
		if h.check == nil {
			fail("%s is only available in a check instance (%s)", c.Op, EnvCheckNamespace)
			return
		}
		if c.Resource == "" {
			fail("%s needs resource (plural.version.group)", c.Op)
			return
		}
		if _, err := parseKey(c.Key); err != nil {
			fail("%v", err)
			return
		}
		if c.Op == OpWithhold {
			h.check.withhold(c.Resource, c.Key)
			reply(ReplyMsg{OK: true})
			return
		}
		reply(ReplyMsg{OK: true, Withheld: h.check.release(c.Resource, c.Key)})
	case OpCacheGet:
		c2 := h.cache.Load()
		if c2 == nil {
			fail("the program's manager cache is not the bridge's (bridge.Setup was not called before ctrl.NewManager)")
			return
		}
		go func() { // the cache may wait for its informer's first sync: never on the connection's goroutine
			// A controller asks for its informers when it starts (after leader election), and its workers' first
			// Get comes once they synced: until then the cache may not have the resource yet.
			waiting := h.awaitWorkers(cacheGetTimeout)
			obj, metadataOnly, err := c2.cachedObject(c.Resource, c.Key)
			if err != nil && waiting != "" {
				fail("%v; controller %s has not started yet (its caches are syncing, or it waits for leader election)", err, waiting)
				return
			}
			if err != nil {
				fail("%v", err)
				return
			}
			reply(ReplyMsg{OK: true, Object: obj, MetadataOnly: metadataOnly && obj != nil})
		}()
	case OpDryRun:
		h.mu.Lock()
		r := h.reconcilerLocked(c.Controller)
		h.mu.Unlock()
		if r == nil {
			fail("no reconciler of controller %q is wrapped with bridge.Wrap", c.Controller)
			return
		}
		key, err := r.parseKey(c.Key)
		if q := h.queue(c.Controller); err != nil && q.awaitItems(func() { h.handle(c) }) {
			return
		}
		if err != nil {
			fail("%v", err)
			return
		}
		if q := h.queue(c.Controller); q != nil {
			if why := q.outside(key); why != "" {
				fail("%s", why)
				return
			}
		}
		go func() { reply(r.dryRun(context.Background(), key)) }()
	default:
		fail("unknown op %q", c.Op)
	}
}
