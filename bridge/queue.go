package bridge

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// maxCauses bounds the causes kept per key between two Gets (the oldest are dropped first; the count of dropped
// causes is reported as a note on the first kept one).
const maxCauses = 64

// Queue wraps the work queue controller-runtime would have built for one controller and reports every per-key
// transition to the editor, and obeys its pause / step / step-key / reset-backoff commands.
//
// Contracts:
//   - It implements priorityqueue.PriorityQueue[reconcile.Request], so the controller keeps using priorities
//     (AddWithOpts, GetWithPriority). Over the client-go queue (priority queue off) AddWithOpts maps to
//     Add / AddAfter / AddRateLimited exactly like controller-runtime's own adapter and priorities are 0.
//   - While running (not paused) every call is forwarded to the inner queue unchanged: the order and timing of
//     keys handed out is the inner queue's (proved by TestReplayIdenticalToStock*).
//   - While paused, workers block in Get before taking a key from the inner queue. A worker that was already
//     blocked inside the inner queue's Get when the pause came keeps the key it receives "held" (still
//     processing for the inner queue) and hands it out first on the next step or after resume. Its triggers
//     are the causes up to the hold; an add of it meanwhile queues it again for after that hand-out's Done, as
//     during any reconcile (the editor is told so again right after its "processing").
//   - Step lets exactly one Get return; step with a key makes that key next (a waiting or backing-off key is
//     made ready now, like an Add; on the priority queue it is raised to the highest priority for that one hand
//     out, and GetWithPriority still returns its own priority). The step's own add is in the inner queue before
//     a worker can take the key for that step, so a step runs exactly one reconcile of the key; that add is
//     announced ("added") when the key was not queued or is being reconciled (it runs again after its Done).
//   - ShutDown releases every worker (paused or not) and never waits for held keys.
//   - Per-key state ("why queued" causes since the last Get, processing, waiting, wire id) lives under mu, but
//     the hot operations (Add now, a hand-out while not gated, Forget, Done) do not take mu: they append an op
//     to log, folded into the state later by the writer or by the next slow path (oplog.go). Everything that
//     reads or changes a key's state synchronously (editor commands, the reconciler wrapper's triggers, an Add
//     after a delay, a backoff, a gated Get or Done) folds the log first, so it sees every operation that
//     returned before it.
//
// Reporting never blocks: messages go to the hub's bounded buffer (dropped and counted when full).
type Queue struct {
	// Layout: the fields every hot operation reads (up to gated) share their cache lines with nothing written
	// per operation: q.mu and the fold's state (written by the writer at every burst) come after a pad, and
	// getters (written by every Get) sits between pads.
	name     string
	hub      *hub
	clock    clock.WithTickerAndDelayedExecution
	inner    priorityqueue.PriorityQueue[reconcile.Request]
	priority bool
	// realClock selects the stamp clock.
	realClock bool
	// seqIndex is this queue's index in the outbox's order (outbox.hot), set before the queue is shared.
	seqIndex uint64
	// log holds the hot operations not folded into the keys' states yet (lockedFold).
	log *opLog
	// started: see workersStarted.
	started atomic.Bool
	// gated is paused || down || len(held) > 0 || len(steps) > 0 || stepping > 0 || stepAdding > 0 (written
	// under mu): when false, the hot operations (Add now, Get, Forget, Done) only append an op to log (oplog.go)
	// and take no lock. A pending step for a key is what makes a key boosted (keyState.boosted), so a boosted key gates too.
	gated atomic.Bool
	// nFailing is len(failing), for the hot path (written under mu, only when a key starts or stops failing).
	nFailing atomic.Int32
	// countGetters: getters is kept (queueConfig.countGetters; tests only).
	countGetters bool
	_            [64]byte
	// getters counts workers inside the inner queue's Get when countGetters is set (tests wait for it); else it
	// stays 0. Not kept by default: two atomic read-modify-writes per Get on a line every worker writes cost the
	// controller's hot path for nothing it uses.
	getters atomic.Int32
	_       [60]byte

	limiter workqueue.TypedRateLimiter[reconcile.Request]
	info    ControllerMsg
	// forObj is the controller's For type (zero when unknown: no bridge.Wrap with its object), set once when the
	// queue registers, before any add.
	forObj forType
	// framePrefix is the start of this queue's transitions frames (encode.go).
	framePrefix []byte

	mu     sync.Mutex
	cond   *sync.Cond
	paused bool
	down   bool
	steps  []*stepToken
	held   []heldItem
	keys   map[reconcile.Request]*keyState
	// gateWaiters counts workers blocked by the pause (tests wait for it instead of sleeping).
	gateWaiters int
	// workersStarted is closed by the first Get. controller-runtime starts a controller's workers only after its
	// caches synced (every initial-list add is in the queue by then), so before it an empty queue may still be
	// filling: a step without key waits for it (Step). started mirrors it for the hot path; stopped is closed by
	// ShutDown.
	workersStarted chan struct{}
	stopped        chan struct{}
	// stepping counts the keys handed out for a step whose Done must answer it (keyState.stepReply != nil).
	stepping int
	// stepAdding counts the step adds in flight (keyState.stepAdds): recorded, not yet returned from the inner
	// queue, their step not yet claimable (Step). addWaiters counts the workers waiting for one of them with the
	// key in hand (tests wait for it).
	stepAdding, addWaiters int
	// free keeps the states of keys that left the queue for reuse (no allocation per key cycle).
	free []*keyState
	// idle counts the states in keys that are idle (see keyState.idle).
	idle int
	// handed: the keys last handed out (one per worker, for up to len(handed) workers) and their states, so the
	// Forget and Done that follow a hand-out find the state without hashing the key again; next is the slot the
	// next hand-out takes. Reset when states are swept.
	handed     [8]handedKey
	handedNext int
	// readied: the keys an add now made ready from not queued, oldest first, with their states, so the fold of
	// their hand-out (usually in the same order) finds the state without hashing the key (lockedReadiedState).
	// An entry (key, state) stays right until states are swept (it is emptied then); entries whose key is no
	// longer queued are skipped. Full: new keys are not remembered (their hand-out hashes the key).
	readied readyRing
	// out is this queue's spool of transitions for the editor (outbox.go), appended under mu.
	out spool
	// failing holds the keys with rate-limiter failures the editor was told of (a backoff transition) and not
	// forgotten since. A Forget of any other key changes nothing the editor shows (its failure count is 0
	// already), so it is not reported: with no failing key at all (nFailing 0) the Forget every successful
	// reconcile makes costs one atomic load. The editor's Reset Backoff always reports it.
	failing map[reconcile.Request]struct{}
	// custom reads the editor's key texts when the controller has a custom request type (typed.go); nil for
	// reconcile.Request.
	custom keyResolver
}

// readyRing is a bounded FIFO of keys and their states (Queue.readied).
type readyRing struct {
	ents    [readyRingSize]handedKey
	head, n int
}

const readyRingSize = 1024

// maxFree bounds Queue.free. minSweep: idle states are swept from Queue.keys once there are more than
// max(minSweep, half of keys) of them, so a key cycling through the queue costs no map delete and insert, and
// the map holds at most about twice the keys in use (amortized O(1) per Done).
const (
	maxFree  = 1024
	minSweep = 1024
)

type heldItem struct {
	key      reconcile.Request
	priority int
}

// stepToken is one editor step: it permits exactly one Get while paused; key (when hasKey) must be the key
// handed out. reply is called exactly once.
type stepToken struct {
	key    reconcile.Request
	hasKey bool
	reply  func(ReplyMsg)
	id     int64
	// claimed: a paused worker took it and is looking for its key; satisfied: a worker handed a key out for it.
	claimed, satisfied bool
}

const (
	notQueued = iota
	queuedReady
	queuedWaiting
)

// keyState is the shadow state of one key. causes (since the last Get) and triggers (the causes of the
// reconcile in progress) swap their backing arrays at each Get, so a key cycling through the queue appends its
// causes without allocating; neither array is ever handed to the outbox or to callers (they get copies).
type keyState struct {
	queued   int
	priority int
	dueAt    time.Time
	timer    clock.Timer
	// late: a wait client-go's delaying queue still holds while the key is ready, processing or idle
	// (latewait.go); nil on the priority queue.
	late       *lateWait
	processing bool
	// held: the key is in Queue.held (lockedHold): taken from the inner queue, not handed out yet.
	held    bool
	boosted bool
	// stepAdds counts this key's step adds in flight (Queue.stepAdding): a worker the inner queue hands the key
	// to meanwhile waits until they returned (lockedReceived).
	stepAdds  int
	causes    []Cause
	dropped   int
	triggers  []Cause
	stepReply *stepToken
	lastEnd   *ReconcileEndMsg
	// wire is the key's id on the wire in hub.keyIDs' current generation (generation << 32 | id; 0: none yet),
	// so neither the hot path nor the writer hashes the key to find it (encode.go).
	wire uint64
	// idle: the key left the queue (not queued, not processing, no causes) and its state is only kept for
	// reuse; an idle state is invisible (Snapshot skips it) and state() revives it.
	idle bool
}

// queueConfig is how a Queue is built; tests inject a fake clock and their own hub.
type queueConfig struct {
	name          string
	priorityQueue bool
	limiter       workqueue.TypedRateLimiter[reconcile.Request]
	clock         clock.WithTickerAndDelayedExecution
	log           logr.Logger
	hub           *hub
	info          ControllerMsg
	// custom, for a controller with a custom request type (typed.go): its keys as reconcile.Requests, and its
	// inner queue (of the controller's own type) seen through them. nil: the inner queue is built here.
	custom *customKeys
	// countGetters keeps Queue.getters (tests that wait for a worker inside the inner Get).
	countGetters bool
}

// customKeys is how a Queue over a controller with a custom request type (typed.go) reaches its inner queue and
// reads the editor's keys: the controller's items are interned as distinct reconcile.Requests, so the Queue keeps
// working on reconcile.Request while the inner queue (the stock one, of the controller's own type) sees the
// controller's items. newInner builds that inner queue with observed (the controller's rate limiter, observed)
// as its rate limiter.
type customKeys struct {
	keys     keyResolver
	newInner func(name string, log logr.Logger, observed workqueue.TypedRateLimiter[reconcile.Request], clk clock.WithTickerAndDelayedExecution) priorityqueue.PriorityQueue[reconcile.Request]
}

// keyResolver reads the editor's key text for a controller with a custom request type: the request of an item
// the controller queued (ok false for a text no item of it ever had).
type keyResolver interface {
	parse(text string) (reconcile.Request, bool)
}

// DefaultRateLimiter returns the rate limiter controller-runtime defaults to when Options.RateLimiter is nil:
// per-item exponential 5 ms → 1000 s with the priority queue, DefaultTypedControllerRateLimiter without.
func DefaultRateLimiter(usePriorityQueue bool) workqueue.TypedRateLimiter[reconcile.Request] {
	if usePriorityQueue {
		return workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](5*time.Millisecond, 1000*time.Second)
	}
	return workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]()
}

// newQueue builds the inner queue exactly as controller-runtime's default NewQueue does (same constructor, same
// name, the controller's rate limiter — observed, not replaced) and wraps it.
func newQueue(cfg queueConfig) *Queue {
	if cfg.limiter == nil {
		cfg.limiter = DefaultRateLimiter(cfg.priorityQueue)
	}
	if cfg.clock == nil {
		cfg.clock = clock.RealClock{}
	}
	q := &Queue{
		name:         cfg.name,
		countGetters: cfg.countGetters,
		hub:          cfg.hub,
		clock:        cfg.clock,
		priority:     cfg.priorityQueue,
		limiter:      cfg.limiter,
		keys:         map[reconcile.Request]*keyState{},
		failing:      map[reconcile.Request]struct{}{},
		log:          newOpLog(),
		info:         cfg.info,
		framePrefix:  framePrefix(cfg.name),

		workersStarted: make(chan struct{}),
		stopped:        make(chan struct{}),
	}
	_, q.realClock = cfg.clock.(clock.RealClock)
	q.cond = sync.NewCond(&q.mu)
	observed := &observedLimiter{inner: cfg.limiter, q: q}
	if cfg.custom != nil {
		q.custom = cfg.custom.keys
		q.inner = cfg.custom.newInner(cfg.name, cfg.log, observed, cfg.clock)
	} else if cfg.priorityQueue {
		q.inner = priorityqueue.New(cfg.name, func(o *priorityqueue.Opts[reconcile.Request]) {
			o.Log = cfg.log
			o.RateLimiter = observed
		})
	} else {
		conf := workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{Name: cfg.name}
		if _, real := cfg.clock.(clock.RealClock); !real {
			conf.Clock = cfg.clock
		}
		q.inner = &clientGoAdapter[reconcile.Request]{workqueue.NewTypedRateLimitingQueueWithConfig[reconcile.Request](observed, conf)}
	}
	q.info.Name = cfg.name
	q.info.PriorityQueue = cfg.priorityQueue
	if q.hub != nil {
		q.seqIndex = q.hub.box.queueIndex()
		q.hub.box.addSource(q)
		paused := q.hub.register(q)
		// Under q.mu: once registered, the connection's goroutines read the queue (announcements).
		q.mu.Lock()
		q.forObj = forTypeOf(q.info)
		q.paused = paused
		q.lockedRegate()
		q.mu.Unlock()
	}
	return q
}

// clientGoAdapter gives the client-go rate-limited queue the priority-queue methods exactly like
// controller-runtime's internal adapter does (priorities dropped, GetWithPriority returns 0).
type clientGoAdapter[T comparable] struct {
	workqueue.TypedRateLimitingInterface[T]
}

func (a *clientGoAdapter[T]) AddWithOpts(o priorityqueue.AddOpts, items ...T) {
	for _, item := range items {
		switch {
		case o.RateLimited:
			a.AddRateLimited(item)
		case o.After > 0:
			a.AddAfter(item, o.After)
		default:
			a.Add(item)
		}
	}
}

func (a *clientGoAdapter[T]) GetWithPriority() (T, int, bool) {
	item, shutdown := a.Get()
	return item, 0, shutdown
}

// observedLimiter forwards to the controller's rate limiter and reports each backoff (failure count and delay).
type observedLimiter struct {
	inner workqueue.TypedRateLimiter[reconcile.Request]
	q     *Queue
}

func (l *observedLimiter) When(item reconcile.Request) time.Duration {
	d := l.inner.When(item)
	l.q.onBackoff(item, d, l.inner.NumRequeues(item))
	return d
}
func (l *observedLimiter) Forget(item reconcile.Request)          { l.inner.Forget(item) }
func (l *observedLimiter) NumRequeues(item reconcile.Request) int { return l.inner.NumRequeues(item) }

var _ priorityqueue.PriorityQueue[reconcile.Request] = (*Queue)(nil)

// Name is the controller's name (the one controller-runtime passed to NewQueue).
func (q *Queue) Name() string { return q.name }

// ---- the workqueue interface ----

// Add adds a key now (ready), like the inner queue's Add (which it calls: for both inner queues that is what
// AddWithOpts with empty options does).
func (q *Queue) Add(item reconcile.Request) {
	q.addNow(item, false, 0)
	q.inner.Add(item)
}

// AddAfter adds a key after a delay, like the inner queue's AddAfter.
func (q *Queue) AddAfter(item reconcile.Request, d time.Duration) {
	q.recordAdd(priorityqueue.AddOpts{After: d}, item)
	q.inner.AddAfter(item, d)
}

// AddRateLimited adds a key after the rate limiter's delay (a backoff retry, reported by the observed limiter).
func (q *Queue) AddRateLimited(item reconcile.Request) { q.inner.AddRateLimited(item) }

// AddWithOpts records the cause of each add (the informer event being handled on this goroutine, a requeue-after,
// a backoff retry) and forwards to the inner queue.
func (q *Queue) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	for _, item := range items {
		q.recordAddWithOpts(o, item)
	}
	q.inner.AddWithOpts(o, items...)
}

// recordAddWithOpts records one add of AddWithOpts (before the inner queue's add): nothing for a rate-limited
// add (the observed limiter reports its backoff).
func (q *Queue) recordAddWithOpts(o priorityqueue.AddOpts, item reconcile.Request) {
	switch {
	case o.RateLimited:
	case o.After > 0:
		q.recordAdd(o, item)
	case o.Priority != nil:
		q.addNow(item, true, *o.Priority)
	default:
		q.addNow(item, false, 0)
	}
}

// recordAdd records one add that is not rate limited, with its cause. An add now is stamped (q.stamp); an add
// after a delay reads the clock, since the key's due time derives from it.
func (q *Queue) recordAdd(o priorityqueue.AddOpts, item reconcile.Request) {
	var now time.Time
	var at int64
	if o.After > 0 {
		now = q.now()
		at = ms(now)
	} else {
		at = q.stamp()
	}
	q.record(o, item, causeFor(currentEvent(), o, item, at, q.forObj), now, at)
}

// addNow records an add now (no delay, not rate limited; with the add's priority when hasPrio): on the hot path
// an op in the log, folded later into the key's state with the cause causeFor gives (the informer event being
// dispatched on this goroutine is looked up now); the slow way (queue gated) exactly that under q.mu.
func (q *Queue) addNow(item reconcile.Request, hasPrio bool, prio int) {
	ev := currentEvent()
	s, pos := q.claim()
	at := q.stamp()
	if !q.gated.Load() {
		s.op = op{kind: opAdd, hasPrio: hasPrio, prio: clampPrio(prio), key: item, ev: ev, at: at, seq: q.hotSeq()}
		q.publish(s, pos)
		return
	}
	q.publish(s, pos) // a no-op
	o := priorityqueue.AddOpts{}
	if hasPrio {
		o.Priority = &prio
	}
	q.record(o, item, causeFor(ev, o, item, at, q.forObj), time.Time{}, at)
}

// addWithCause adds with an explicit cause (editor commands).
func (q *Queue) addWithCause(o priorityqueue.AddOpts, item reconcile.Request, c Cause) {
	now := q.now()
	q.record(o, item, c, now, ms(now))
	q.inner.AddWithOpts(o, item)
}

// record updates the key's shadow state for one add (the inner queue's semantics) and reports it at at; now
// (the time at stands for) is needed, and set, only when o.After > 0.
func (q *Queue) record(o priorityqueue.AddOpts, item reconcile.Request, c Cause, now time.Time, at int64) {
	q.mu.Lock()
	q.lockedFold()
	q.lockedRecord(o, item, &c, false, now, at, 0)
	q.mu.Unlock()
}

// lockedRecord is record under q.mu with the log folded; seq is the transition's place in the outbox's order
// (0: take one now); plain tells that *c is plainCause(at) (the record then carries no copy of it).
func (q *Queue) lockedRecord(o priorityqueue.AddOpts, item reconcile.Request, c *Cause, plain bool, now time.Time, at int64, seq uint64) {
	if q.down {
		return
	}
	prio := 0
	if o.Priority != nil && q.priority {
		prio = *o.Priority
	}
	ks := q.state(item)
	ks.addCause(c)
	fresh := ks.queued == notQueued
	if fresh || prio > ks.priority {
		ks.priority = prio
	}
	// Filled in place in the spool (no record built and copied).
	var tmp record
	r := q.lockedOut(&tmp, seq)
	r.key, r.hasPrio, r.prio, r.at, r.wire = item, true, ks.priority, at, q.lockedWire(ks)
	switch {
	case o.After > 0 && ks.queued != queuedReady:
		due := now.Add(o.After)
		if ks.queued == queuedWaiting && ks.dueAt.Before(due) {
			due = ks.dueAt
		}
		q.lockedWait(item, ks, due)
		r.tr, r.dueAt, r.delayMs = trWaiting, ms(due), o.After.Milliseconds()
	case o.After <= 0 && ks.queued == queuedWaiting:
		q.lockedReady(item, ks)
		r.tr = trReady
	default:
		if o.After > 0 {
			// An AddAfter of a ready key: the priority queue ignores it, client-go keeps it (latewait.go).
			q.lockedKeepLate(item, ks, now.Add(o.After), *c)
		}
		if ks.queued == notQueued {
			ks.queued = queuedReady
			if rr := &q.readied; rr.n < readyRingSize {
				rr.ents[(rr.head+rr.n)%readyRingSize] = handedKey{item, ks}
				rr.n++
			}
		}
		r.tr = trAdded
	}
	if plain {
		r.plain = true
		q.lockedOutDone(r, &tmp, nil)
		return
	}
	if r != &tmp {
		q.out.causes = append(q.out.causes, *c)
		r.cause = int32(len(q.out.causes))
	}
	q.lockedOutDone(r, &tmp, c)
}

// onBackoff is called by the observed rate limiter inside a rate-limited add.
func (q *Queue) onBackoff(item reconcile.Request, d time.Duration, failures int) {
	now := q.now()
	due := now.Add(d)
	c := Cause{Kind: CauseBackoff, Failures: failures, DelayMs: d.Milliseconds(), At: ms(now)}
	q.mu.Lock()
	q.lockedFold()
	if q.down {
		q.mu.Unlock()
		return
	}
	ks := q.state(item)
	ks.addCause(&c)
	if _, ok := q.failing[item]; !ok {
		q.failing[item] = struct{}{}
		q.nFailing.Store(int32(len(q.failing)))
	}
	if ks.queued != queuedReady {
		if d > 0 {
			if ks.queued == queuedWaiting && ks.dueAt.Before(due) {
				due = ks.dueAt
			}
			q.lockedWait(item, ks, due)
		} else {
			ks.queued = queuedReady
		}
	} else if d > 0 {
		q.lockedKeepLate(item, ks, due, c) // client-go keeps the retry of a key already queued (latewait.go)
	}
	r := record{kind: recQueue, q: q, key: item, tr: trBackoff, hasPrio: true, prio: ks.priority,
		dueAt: ms(due), delayMs: d.Milliseconds(), failures: failures, at: ms(now), wire: q.lockedWire(ks)}
	q.lockedSendCause(&r, &c)
	q.mu.Unlock()
}

// lockedWait marks the key waiting until due and arms a timer that reports "ready" when due passes.
func (q *Queue) lockedWait(item reconcile.Request, ks *keyState, due time.Time) {
	// client-go holds one wait per key, the earliest (latewait.go).
	if late := q.lockedTakeLate(ks); !late.IsZero() && late.Before(due) {
		due = late
	}
	ks.queued = queuedWaiting
	if ks.timer != nil && ks.dueAt.Equal(due) {
		return
	}
	if ks.timer != nil {
		ks.timer.Stop()
	}
	ks.dueAt = due
	// In a goroutine: a fake clock runs AfterFunc callbacks under its own lock, and expire reads the clock.
	ks.timer = q.clock.AfterFunc(due.Sub(q.clock.Now()), func() { go q.expire(item, due) })
}

// lockedReady makes a key ready now. On client-go's queue a wait not due yet stays pending there (latewait.go).
func (q *Queue) lockedReady(item reconcile.Request, ks *keyState) {
	if ks.timer != nil {
		ks.timer.Stop()
		ks.timer = nil
		if now := q.clock.Now(); ks.queued == queuedWaiting && ks.dueAt.After(now) {
			q.lockedKeepLate(item, ks, ks.dueAt, ks.waitCause(ms(now)))
		}
	}
	ks.queued = queuedReady
	ks.dueAt = time.Time{}
}

// expire reports a waiting key whose due time passed (the inner queue made it ready at the same moment).
func (q *Queue) expire(item reconcile.Request, due time.Time) {
	q.mu.Lock()
	q.lockedFold()
	ks := q.keys[item]
	if q.down || ks == nil || ks.queued != queuedWaiting || !ks.dueAt.Equal(due) {
		q.mu.Unlock()
		return
	}
	ks.timer = nil
	q.lockedReady(item, ks)
	r := record{kind: recQueue, q: q, key: item, tr: trReady, hasPrio: true, prio: ks.priority, at: ms(q.now()), wire: q.lockedWire(ks)}
	q.lockedSend(&r)
	q.mu.Unlock()
}

// Get is GetWithPriority without the priority.
func (q *Queue) Get() (reconcile.Request, bool) {
	item, _, shutdown := q.GetWithPriority()
	return item, shutdown
}

// GetWithPriority hands out the next key (blocking while paused, see the type's contract).
//
// Fast path: while the queue is not gated (running, nothing held, no step pending, not shut down) a worker goes
// straight into the inner queue's Get and hands the key out by appending an op to the log (no lock). A pause that
// comes while it waits there is seen after the inner Get returns (the key is then held), exactly as for a worker
// that entered the inner Get before; the handshake of oplog.go makes a pause that returned before the key was
// handed out always seen.
func (q *Queue) GetWithPriority() (reconcile.Request, int, bool) {
	if !q.started.Load() {
		q.markStarted()
	}
	var tok *stepToken
	if !q.gated.Load() {
		if q.countGetters {
			q.getters.Add(1)
		}
		key, prio, shutdown := q.inner.GetWithPriority()
		if q.countGetters {
			q.getters.Add(-1)
		}
		if shutdown {
			return key, prio, shutdown
		}
		s, pos := q.claim()
		// A key handed out with the step's boost (math.MaxInt) takes the slow path: lockedReceived replaces a
		// boost left behind by a step that was served already with the key's own priority.
		if !q.gated.Load() && prio != math.MaxInt {
			s.op = op{kind: opHandOut, key: key, prio: clampPrio(prio), at: q.stamp(), seq: q.hotSeq()}
			q.publish(s, pos)
			return key, prio, false
		}
		q.publish(s, pos) // a no-op
		q.mu.Lock()
		q.lockedFold()
		if k, p, ok := q.lockedReceived(key, prio, &tok); ok {
			return k, p, false
		}
	} else {
		q.mu.Lock()
	}
	for {
		q.lockedFold()
		if tok != nil && tok.satisfied {
			tok = nil // another worker served this step
		}
		if q.down {
			q.mu.Unlock()
			return reconcile.Request{}, 0, true
		}
		if tok == nil && q.paused {
			tok = q.lockedClaim()
			if tok == nil {
				q.gateWaiters++
				q.cond.Wait()
				q.gateWaiters--
				continue
			}
		}
		if i := q.lockedHeldIndex(tok); i >= 0 {
			it := q.held[i]
			q.held = append(q.held[:i], q.held[i+1:]...)
			q.lockedRegate()
			return q.lockedHandOut(it, tok, nil)
		}
		if tok != nil && tok.hasKey {
			if ks := q.keys[tok.key]; ks != nil && ks.processing {
				// The key is being reconciled by another worker (a reconcile in flight when the pause came):
				// the inner queue hands it out only after its Done.
				q.cond.Wait()
				continue
			}
		}
		if q.countGetters {
			q.getters.Add(1)
		}
		q.mu.Unlock()
		key, prio, shutdown := q.inner.GetWithPriority()
		q.mu.Lock()
		if q.countGetters {
			q.getters.Add(-1)
		}
		if shutdown {
			if tok != nil && !tok.satisfied {
				tok.claimed = false
			}
			q.mu.Unlock()
			return key, prio, shutdown
		}
		q.lockedFold()
		if k, p, ok := q.lockedReceived(key, prio, &tok); ok {
			return k, p, false
		}
	}
}

// markStarted records that the workers started (the first Get), once.
func (q *Queue) markStarted() {
	q.mu.Lock()
	if !q.started.Load() {
		q.started.Store(true)
		close(q.workersStarted)
	}
	q.mu.Unlock()
}

// lockedReceived decides about a key the inner queue handed to this worker (which holds *tok, or nil): hand it
// out (ok; q.mu is then unlocked) or hold it for a step / the resume, or drop it (q.mu stays locked: the caller
// loops).
//
// Contracts, for a step of this key (Step):
//   - While the step's add is in flight (recorded, not returned from the inner queue, the step not claimable
//     yet) the worker waits with the key in hand, then decides as if it received the key after the add: the key
//     is handed out for that step, never before its step exists (ShutDown meanwhile: the key is returned to the
//     inner queue with Done and the loop reports the shutdown).
//   - A pending step of this very key is served before the step this worker claimed for another key or for any
//     key (whose claim is given back for the next worker): only this key can serve it.
//   - A key handed out with the step's boost (math.MaxInt) that nothing queued since (no pending step of it, not
//     queued in the key's state) is the inner queue's copy of a step's add that landed after a worker had taken
//     the key for that step already: it is dropped (the inner queue's Done, no transition), so the step ran
//     exactly one reconcile and no hand-out goes unannounced. A boost that an add of the key since joined is
//     handed out with the key's own priority (0 when nothing queued it), never the boost, which is no JSON int
//     the editor takes and no priority the controller gave.
func (q *Queue) lockedReceived(key reconcile.Request, prio int, tok **stepToken) (reconcile.Request, int, bool) {
	if ks := q.keys[key]; ks != nil && ks.stepAdds > 0 {
		q.addWaiters++
		for ks.stepAdds > 0 && !q.down {
			q.cond.Wait()
		}
		q.addWaiters--
		if q.down {
			q.mu.Unlock()
			q.inner.Done(key)
			q.mu.Lock()
			return reconcile.Request{}, 0, false
		}
		q.lockedFold()
	}
	if *tok != nil && (*tok).satisfied {
		*tok = nil
	}
	it := heldItem{key: key, priority: prio}
	ks := q.keys[key]
	if ks != nil && ks.boosted {
		it.priority = ks.priority
	} else if prio == math.MaxInt {
		it.priority = 0
		if ks != nil && !ks.idle {
			it.priority = ks.priority
		}
		if (ks == nil || ks.idle || ks.queued == notQueued) && q.lockedKeyStep(key, *tok) == nil {
			q.mu.Unlock()
			q.inner.Done(key)
			q.mu.Lock()
			return reconcile.Request{}, 0, false
		}
	}
	if t := *tok; t != nil && (!t.hasKey || t.key != key) {
		if kt := q.lockedKeyStep(key, nil); kt != nil {
			t.claimed = false // another worker takes it
			*tok = nil
			q.cond.Broadcast()
			k, p, _ := q.lockedHandOut(it, kt, ks)
			return k, p, true
		}
	}
	if *tok == nil && q.paused {
		// This worker was inside the inner Get when the pause came: serve a pending step this key satisfies,
		// or hold the key for the next step / resume.
		if t := q.lockedTokenFor(key); t != nil {
			k, p, _ := q.lockedHandOut(it, t, ks)
			return k, p, true
		}
		q.lockedHold(it, ks)
		q.cond.Broadcast()
		return reconcile.Request{}, 0, false
	}
	if t := *tok; t != nil && t.hasKey && key != t.key {
		q.lockedHold(it, ks)
		return reconcile.Request{}, 0, false
	}
	k, p, _ := q.lockedHandOut(it, *tok, ks)
	return k, p, true
}

// lockedKeyStep is a pending step of key: tok when it is one, else the first in q.steps; nil when none.
func (q *Queue) lockedKeyStep(key reconcile.Request, tok *stepToken) *stepToken {
	if tok != nil && tok.hasKey && tok.key == key && !tok.satisfied {
		return tok
	}
	for _, t := range q.steps {
		if t.hasKey && t.key == key {
			return t
		}
	}
	return nil
}

// lockedRegate recomputes gated after a change of paused, down, held, steps, stepping or stepAdding.
//
// It stores only a change: the writer's fold calls it at every hand-out, and a store (even of the same value)
// takes the cache line of gated, which every hot operation of the controller's goroutines reads, away from their
// cores. Skipping an unchanged store publishes nothing less: the slow paths that need the Dekker handshake of
// oplog.go store gated = true themselves before they fold.
func (q *Queue) lockedRegate() {
	if g := q.paused || q.down || len(q.held) > 0 || len(q.steps) > 0 || q.stepping > 0 || q.stepAdding > 0; q.gated.Load() != g {
		q.gated.Store(g)
	}
}

// lockedClaim claims the first unclaimed step token (nil when none).
func (q *Queue) lockedClaim() *stepToken {
	for _, t := range q.steps {
		if !t.claimed {
			t.claimed = true
			return t
		}
	}
	return nil
}

// lockedTokenFor is a pending step that key satisfies (its own key first, then a keyless one); nil when none.
func (q *Queue) lockedTokenFor(key reconcile.Request) *stepToken {
	for _, t := range q.steps {
		if t.hasKey && t.key == key {
			return t
		}
	}
	for _, t := range q.steps {
		if !t.hasKey {
			return t
		}
	}
	return nil
}

// lockedHeldIndex is the held item this Get may take: the first one without a token or a keyless step, the
// step's key otherwise; -1 when none.
func (q *Queue) lockedHeldIndex(tok *stepToken) int {
	if len(q.held) == 0 {
		return -1
	}
	if tok == nil || !tok.hasKey {
		if tok == nil && q.paused {
			return -1
		}
		return 0
	}
	for i, h := range q.held {
		if h.key == tok.key {
			return i
		}
	}
	return -1
}

// lockedHandOut (ks: the key's state when the caller has it, else nil) marks the key processing (satisfying tok,
// or a step for this key issued while running), reports it with every cause since the last Get, and unlocks.
func (q *Queue) lockedHandOut(it heldItem, tok *stepToken, ks *keyState) (reconcile.Request, int, bool) {
	q.lockedProcessing(it, tok, ks, q.stamp(), 0)
	q.mu.Unlock()
	return it.key, it.priority, false
}

// lockedProcessing is lockedHandOut without the unlock, at the stamp at and the outbox order seq (0: now).
func (q *Queue) lockedProcessing(it heldItem, tok *stepToken, ks *keyState, at int64, seq uint64) {
	if ks == nil || ks.idle {
		ks = q.state(it.key)
	}
	if tok == nil {
		for _, s := range q.steps {
			if s.hasKey && s.key == it.key {
				tok = s
				break
			}
		}
	}
	if tok != nil {
		tok.satisfied = true
		for i, s := range q.steps {
			if s == tok {
				q.steps = append(q.steps[:i], q.steps[i+1:]...)
				break
			}
		}
		q.stepping++
	}
	// A held key left the inner queue when it was held (lockedHold): what queued it since is for after this
	// reconcile.
	again := ks.held && ks.queued != notQueued
	if !ks.held {
		q.lockedTake(ks)
	}
	ks.held = false
	ks.processing = true
	ks.boosted = false
	ks.stepReply = tok
	ks.lastEnd = nil
	prio := it.priority
	q.handed[q.handedNext] = handedKey{it.key, ks}
	q.handedNext = (q.handedNext + 1) % len(q.handed)
	// No causes: the editor has them from this key's transitions since its last processing (and reconcileStart
	// repeats them as triggers).
	var tmp record
	r := q.lockedOut(&tmp, seq)
	r.key, r.tr, r.hasPrio, r.prio, r.at, r.wire = it.key, trProcessing, true, prio, at, q.lockedWire(ks)
	q.lockedOutDone(r, &tmp, nil)
	if again {
		q.lockedRequeued(it.key, ks, at)
	}
	q.lockedRegate()
}

// lockedTake is the inner queue handing the key out (to a worker, or to one the bridge then holds): it is no
// longer queued and the causes since the last hand-out become the triggers of this one.
func (q *Queue) lockedTake(ks *keyState) {
	if ks.timer != nil {
		ks.timer.Stop()
		ks.timer = nil
	}
	if ks.late != nil {
		q.lockedLateHandedOut(ks) // before takeCauses: a late wait client-go added the key for is a trigger
	}
	ks.queued = notQueued
	ks.dueAt = time.Time{}
	ks.takeCauses()
	ks.priority = 0
}

// lockedHold holds a key the inner queue handed to a worker that may not hand it out yet (paused, or serving a
// step of another key; ks: the key's state when the caller has it). For the inner queue the key is processing
// from now on: the causes so far are the triggers of the held hand-out, and an add of the key meanwhile queues it
// again for after that hand-out's Done (reported again after its "processing", lockedRequeued), as during any
// reconcile.
func (q *Queue) lockedHold(it heldItem, ks *keyState) {
	if ks == nil || ks.idle {
		ks = q.state(it.key)
	}
	q.lockedTake(ks)
	ks.held = true
	q.held = append(q.held, it)
	q.lockedRegate()
}

// lockedRequeued tells the editor, right after the "processing" of a held key, that the key is queued again (the
// editor's "processing" ends a key's queued and waiting states): "added" or, while a delay runs, "waiting" or
// "backoff". The causes went with the transitions of the adds themselves.
func (q *Queue) lockedRequeued(item reconcile.Request, ks *keyState, at int64) {
	var tmp record
	r := q.lockedOut(&tmp, 0)
	r.key, r.tr, r.hasPrio, r.prio, r.at, r.wire = item, trAdded, true, ks.priority, at, q.lockedWire(ks)
	if ks.queued == queuedWaiting {
		r.tr, r.dueAt, r.delayMs = trWaiting, ms(ks.dueAt), max(0, ms(ks.dueAt)-at)
		if ks.lastCauseKind() == CauseBackoff {
			r.tr, r.failures = trBackoff, q.limiter.NumRequeues(item)
		}
	}
	q.lockedOutDone(r, &tmp, nil)
}

// Done marks the end of processing a key; a step waiting for this key's reconcile is answered now.
//
// The done is logged before the inner queue's Done: the inner queue may hand the key out again right after it,
// and that hand-out must come after this done in the log. It is published before too: no slot stays claimed
// across a call into the inner queue (the priority queue calls the rate limiter, hence onBackoff and its fold,
// under its own lock, which the inner Done takes).
func (q *Queue) Done(item reconcile.Request) {
	tok, end := q.recordDone(item)
	q.inner.Done(item)
	if tok != nil {
		tok.reply(ReplyMsg{ID: tok.id, OK: true, Reconcile: end})
	}
}

// recordDone is Done's part before the inner queue's Done: the op logged (hot path) or the key's state changed
// under q.mu (gated); it returns the step the reconcile answers, which the caller replies to after the inner Done.
func (q *Queue) recordDone(item reconcile.Request) (*stepToken, *ReconcileEndMsg) {
	s, pos := q.claim()
	if !q.gated.Load() {
		s.op = op{kind: opDone, key: item, at: q.stamp(), seq: q.hotSeq()}
		q.publish(s, pos)
		return nil, nil
	}
	q.publish(s, pos) // a no-op
	q.mu.Lock()
	q.lockedFold()
	tok, end := q.lockedDone(item, q.stamp(), 0)
	q.mu.Unlock()
	return tok, end
}

// lockedDone is Done's change of the key's state and its report (at, seq as for lockedProcessing); it returns
// the step this reconcile answers (nil when none) and its outcome.
func (q *Queue) lockedDone(item reconcile.Request, at int64, seq uint64) (*stepToken, *ReconcileEndMsg) {
	var ks *keyState
	if ks = q.lockedHanded(item); ks == nil {
		ks = q.keys[item]
	}
	var tok *stepToken
	var end *ReconcileEndMsg
	if ks != nil {
		ks.processing = false
		tok, ks.stepReply = ks.stepReply, nil
		end, ks.lastEnd = ks.lastEnd, nil
		if tok != nil {
			q.stepping--
			q.lockedRegate()
		}
		clear(ks.triggers)
		ks.triggers = ks.triggers[:0]
		if ks.queued == notQueued && len(ks.causes) == 0 && ks.late == nil && !ks.idle {
			ks.idle = true
			q.idle++
			if q.idle > minSweep && q.idle > len(q.keys)/2 {
				q.lockedSweep()
			}
		}
	}
	q.cond.Broadcast()
	if !q.down {
		var tmp record
		r := q.lockedOut(&tmp, seq)
		r.key, r.tr, r.at, r.wire = item, trDone, at, q.lockedWire(ks)
		q.lockedOutDone(r, &tmp, nil)
	}
	return tok, end
}

// Forget resets the key's rate-limiter failures. It is reported ("forgotten") only for a key that had failures
// (see Queue.failing): controller-runtime forgets after every successful reconcile, and a key that never failed
// has nothing to reset.
func (q *Queue) Forget(item reconcile.Request) {
	q.inner.Forget(item)
	if q.forgetReported() {
		q.recordForget(item)
	}
}

// forgetReported tells whether a Forget may have to be reported (some key is failing): when false, a Forget
// changes nothing the editor shows.
func (q *Queue) forgetReported() bool { return q.hub != nil && q.nFailing.Load() != 0 }

// recordForget is Forget's report, after the inner queue's Forget (only called when forgetReported).
func (q *Queue) recordForget(item reconcile.Request) {
	s, pos := q.claim()
	if !q.gated.Load() {
		s.op = op{kind: opForget, key: item, at: q.stamp(), seq: q.hotSeq()}
		q.publish(s, pos)
		return
	}
	q.publish(s, pos) // a no-op
	q.mu.Lock()
	q.lockedFold()
	q.lockedForget(item, q.stamp(), 0, false)
	q.mu.Unlock()
}

// lockedForget reports a Forget of a failing key, or of any key with always (at, seq as for lockedProcessing).
func (q *Queue) lockedForget(item reconcile.Request, at int64, seq uint64, always bool) {
	if _, ok := q.failing[item]; ok {
		delete(q.failing, item)
		q.nFailing.Store(int32(len(q.failing)))
	} else if !always {
		return
	}
	var tmp record
	r := q.lockedOut(&tmp, seq)
	r.key, r.tr, r.at = item, trForgotten, at
	if ks := q.lockedHanded(item); ks != nil {
		r.wire = q.lockedWire(ks)
	}
	q.lockedOutDone(r, &tmp, nil)
}

// NumRequeues is the rate limiter's failure count for the key.
func (q *Queue) NumRequeues(item reconcile.Request) int { return q.inner.NumRequeues(item) }

// Len is the number of ready keys (the inner queue's plus the keys held while paused).
func (q *Queue) Len() int {
	n := q.inner.Len()
	q.mu.Lock()
	n += len(q.held)
	q.mu.Unlock()
	return n
}

// ShuttingDown reports whether ShutDown was called.
func (q *Queue) ShuttingDown() bool { return q.inner.ShuttingDown() }

// ShutDown releases every worker, including paused ones, and shuts the inner queue down.
func (q *Queue) ShutDown() { q.shutdown(false) }

// ShutDownWithDrain releases held keys first (so a drain never waits for them), then drains the inner queue.
func (q *Queue) ShutDownWithDrain() { q.shutdown(true) }

func (q *Queue) shutdown(drain bool) {
	q.mu.Lock()
	if q.down {
		q.mu.Unlock()
		return
	}
	q.gated.Store(true) // before the fold: every hot op from now on takes the slow way (oplog.go)
	q.lockedFold()
	q.down = true
	close(q.stopped)
	held, steps := q.held, q.steps
	q.held, q.steps = nil, nil
	q.lockedRegate()
	for _, ks := range q.keys {
		if ks.timer != nil {
			ks.timer.Stop()
			ks.timer = nil
		}
		q.lockedTakeLate(ks)
		ks.held = false
	}
	q.cond.Broadcast()
	q.mu.Unlock()
	for _, h := range held {
		q.inner.Done(h.key)
	}
	for _, s := range steps {
		s.reply(ReplyMsg{ID: s.id, Error: "the controller's queue shut down"})
	}
	if drain {
		q.inner.ShutDownWithDrain()
	} else {
		q.inner.ShutDown()
	}
	r := record{kind: recQueue, q: q, tr: trShutdown, noKey: true, at: ms(q.now())}
	q.send(&r)
	if q.hub != nil {
		q.hub.unregister(q)
	}
}

// ---- editor commands ----

// Pause makes workers block before taking the next key; reconciles in flight finish.
func (q *Queue) Pause() { q.setPaused(true) }

// Resume lets workers run freely; pending steps are answered when their reconcile ends.
func (q *Queue) Resume() { q.setPaused(false) }

// Paused reports whether the queue is paused.
func (q *Queue) Paused() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.paused
}

func (q *Queue) setPaused(p bool) {
	if q.setPausedQuiet(p) && q.hub != nil {
		q.mu.Lock()
		info := q.info
		q.mu.Unlock()
		q.hub.sendCtrl(&info)
	}
}

// setPausedQuiet changes the pause state without announcing it; it reports whether it changed.
func (q *Queue) setPausedQuiet(p bool) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	changed := q.paused != p
	q.paused = p
	q.info.Paused = p
	q.lockedRegate()
	q.lockedFold() // after gated: a key handed out on the hot path before the pause is reported before it
	q.cond.Broadcast()
	return changed
}

// Step lets exactly one reconcile run while paused. With hasKey, key is the one handed out (made ready now if it
// waits or backs off, queued again for after its Done when it is being reconciled, added first with force when
// not queued; each reported with the step as cause: "ready", "added", "added"); Step returns only once that add
// is in the inner queue. reply is called exactly once: when that reconcile's Done happened, or at once with an
// error. A step without key on an empty queue whose workers have not started yet (controller-runtime is still
// syncing its caches, or waits for leadership) waits until they start, then steps the first key of the initial
// list, or is refused when the queue is still empty. One on a queue whose keys all wait (a requeue-after or a
// backoff retry not due yet) is refused at once, as on an empty queue: it does not wait until the first of them is
// due (up to controller-runtime's 1000 s backoff).
func (q *Queue) Step(key reconcile.Request, hasKey, force bool, id int64, reply func(ReplyMsg)) {
	tok := &stepToken{key: key, hasKey: hasKey, reply: reply, id: id}
	q.mu.Lock()
	// Gated before the fold (oplog.go): no hot op races with the key states read and the steps added below;
	// lockedRegate on every way out keeps it only while a step is pending.
	q.gated.Store(true)
	q.lockedFold()
	defer q.regate()
	if q.down {
		q.mu.Unlock()
		reply(ReplyMsg{ID: id, Error: "the controller's queue shut down"})
		return
	}
	if !hasKey {
		if !q.paused {
			q.mu.Unlock()
			reply(ReplyMsg{ID: id, Error: "the controller is not paused: a step without key needs a paused queue"})
			return
		}
		if !q.lockedAnyReady() {
			why := q.lockedNothingReady()
			q.mu.Unlock()
			if !q.started.Load() {
				go func() {
					select {
					case <-q.workersStarted:
					case <-q.stopped:
					}
					q.Step(key, hasKey, force, id, reply)
				}()
				return
			}
			reply(ReplyMsg{ID: id, Error: why})
			return
		}
		q.steps = append(q.steps, tok)
		q.cond.Broadcast()
		q.mu.Unlock()
		return
	}
	ks := q.keys[key]
	held := false
	for _, h := range q.held {
		held = held || h.key == key
	}
	queued := held || (ks != nil && (ks.queued != notQueued || ks.processing))
	if !queued && !force {
		q.mu.Unlock()
		reply(ReplyMsg{ID: id, Error: "key " + requestKey(key) + " is not in the queue (use force to add it)"})
		return
	}
	needAdd := !held && (ks == nil || ks.queued != queuedReady || q.priority)
	if !needAdd {
		q.steps = append(q.steps, tok)
		q.cond.Broadcast()
		q.mu.Unlock()
		return
	}
	// The step's own add makes the key ready now and, on the priority queue, first (math.MaxInt until the key is
	// handed out; GetWithPriority then returns the key's own priority). Recorded first, like every add; the step
	// is claimable only once the add returned, so no worker takes the key for it before the add is in the inner
	// queue (that worker would leave the add there: one more reconcile, never announced). A worker the inner queue
	// hands the key to meanwhile waits for it (lockedReceived).
	now := q.now()
	switch {
	case !queued:
		c := Cause{Kind: CauseManual, Note: "step (force) from Reconcile Lab", At: ms(now)}
		q.lockedRecord(priorityqueue.AddOpts{}, key, &c, false, now, ms(now), 0)
	case ks.queued == notQueued, ks.queued == queuedWaiting:
		// Being reconciled: the add queues it again for after its Done ("added"). Waiting (a requeue-after or a
		// backoff retry not due yet): the add drops the wait and makes it ready now ("ready"). Either way the
		// editor is told, with the step as cause, before the step's hand-out.
		c := Cause{Kind: CauseManual, Note: "step from Reconcile Lab", At: ms(now)}
		q.lockedRecord(priorityqueue.AddOpts{}, key, &c, false, now, ms(now), 0)
	}
	ks = q.keys[key]
	if q.priority {
		ks.boosted = true
	}
	ks.stepAdds++
	q.stepAdding++
	q.lockedRegate()
	q.mu.Unlock()
	o := priorityqueue.AddOpts{}
	if q.priority {
		o.Priority = intPtr(math.MaxInt)
	}
	q.inner.AddWithOpts(o, key)
	q.mu.Lock()
	q.lockedFold()
	ks.stepAdds--
	q.stepAdding--
	q.cond.Broadcast()
	if q.down {
		q.mu.Unlock()
		reply(ReplyMsg{ID: id, Error: "the controller's queue shut down"})
		return
	}
	q.steps = append(q.steps, tok)
	q.mu.Unlock()
}

// ResetBackoff forgets the rate limiter's failures for key (every known key when hasKey is false); a key
// waiting for its backoff retry becomes ready now.
func (q *Queue) ResetBackoff(key reconcile.Request, hasKey bool) {
	q.mu.Lock()
	q.lockedFold()
	var keys []reconcile.Request
	if hasKey {
		keys = []reconcile.Request{key}
	} else {
		for k := range q.keys {
			keys = append(keys, k)
		}
		for k := range q.failing {
			if q.keys[k] == nil {
				keys = append(keys, k)
			}
		}
	}
	var ready []reconcile.Request
	for _, k := range keys {
		if ks := q.keys[k]; ks != nil && ks.queued == queuedWaiting && ks.lastCauseKind() == CauseBackoff {
			ready = append(ready, k)
		}
	}
	q.mu.Unlock()
	for _, k := range keys {
		if q.inner.NumRequeues(k) > 0 || hasKey {
			// Reported even when the bridge saw no failure of k: the editor's count is reset in any case.
			q.inner.Forget(k)
			if q.hub != nil {
				q.mu.Lock()
				q.lockedFold()
				q.lockedForget(k, q.stamp(), 0, true)
				q.mu.Unlock()
			}
		}
	}
	for _, k := range ready {
		q.addWithCause(priorityqueue.AddOpts{}, k, Cause{Kind: CauseManual, Note: "backoff reset from Reconcile Lab", At: ms(q.clock.Now())})
	}
}

// ReconcileNow adds key now with a manual cause (still subject to pause).
func (q *Queue) ReconcileNow(key reconcile.Request) {
	q.addWithCause(priorityqueue.AddOpts{}, key, Cause{Kind: CauseManual, Note: "reconcile now from Reconcile Lab", At: ms(q.clock.Now())})
}

// Snapshot is the queue's per-key state for the editor.
func (q *Queue) Snapshot() map[string]any {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.lockedFold()
	return q.lockedSnapshot()
}

// lockedSnapshot is Snapshot under q.mu with the log folded.
func (q *Queue) lockedSnapshot() map[string]any {
	keys := []map[string]any{}
	held := map[reconcile.Request]bool{}
	for _, h := range q.held {
		held[h.key] = true
	}
	for k, ks := range q.keys {
		if ks.idle {
			continue
		}
		state := "idle"
		switch {
		case ks.processing:
			state = "processing"
		case held[k]:
			state = "ready"
		case ks.queued == queuedReady:
			state = "ready"
		case ks.queued == queuedWaiting:
			state = "waiting"
		}
		causes := append([]Cause{}, ks.causes...)
		if ks.held {
			// Why it is ready: the causes of the held hand-out, then those queuing it again.
			causes = append(append([]Cause{}, ks.triggers...), causes...)
		}
		e := map[string]any{"key": requestKey(k), "state": state, "failures": q.limiter.NumRequeues(k), "causes": causes}
		if q.priority {
			e["priority"] = ks.priority
			if ks.held {
				e["priority"] = q.lockedHeldPriority(k)
			}
		}
		if !ks.dueAt.IsZero() {
			e["dueAt"] = ms(ks.dueAt)
		}
		keys = append(keys, e)
	}
	for k := range held {
		if ks, ok := q.keys[k]; !ok || ks.idle {
			keys = append(keys, map[string]any{"key": requestKey(k), "state": "ready", "failures": q.limiter.NumRequeues(k), "causes": []Cause{}})
		}
	}
	return map[string]any{"name": q.name, "paused": q.paused, "workersStarted": q.started.Load(), "keys": keys}
}

// lockedHeldPriority is the priority key is held with (0 when it is not held).
func (q *Queue) lockedHeldPriority(key reconcile.Request) int {
	for _, h := range q.held {
		if h.key == key {
			return h.priority
		}
	}
	return 0
}

// ---- reconciler hooks ----

// takeTriggers returns the causes that led to the key's current reconcile (set when Get handed it out).
func (q *Queue) takeTriggers(item reconcile.Request) []Cause {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.lockedFold()
	return q.lockedTriggers(item)
}

func (q *Queue) lockedTriggers(item reconcile.Request) []Cause {
	if ks := q.keys[item]; ks != nil && ks.processing {
		return append([]Cause{}, ks.triggers...)
	}
	return nil
}

// isProcessing reports whether item was handed out by q and is not done yet (every op logged before is folded).
func (q *Queue) isProcessing(item reconcile.Request) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.lockedFold()
	ks := q.keys[item]
	return ks != nil && ks.processing
}

// reconcileStarted sets m.Triggers to the causes of item's current reconcile (an empty list when none) and
// queues m for the editor in q's own order: after every transition q reported before it (the hand-out that
// started this reconcile among them). The reconciler wrapper calls it once per reconcile, before Reconcile runs.
func (q *Queue) reconcileStarted(item reconcile.Request, m *ReconcileStartMsg) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.lockedFold()
	if m.Triggers = q.lockedTriggers(item); m.Triggers == nil {
		m.Triggers = []Cause{}
	}
	q.lockedSend(&record{kind: recMsg, msg: m})
}

// reconcileEnded queues the reconcile's end for the editor in q's order, and keeps its outcome for a step reply
// sent at Done. The wrapper calls it when Reconcile returned (or panicked), before controller-runtime re-adds the
// key: so the editor always reads an end before the backoff or requeue its result causes, and before its Done.
// (Sent apart from q's transitions, the end could reach the editor after them: the writer takes each source in
// turn.)
func (q *Queue) reconcileEnded(item reconcile.Request, end *ReconcileEndMsg) {
	q.mu.Lock()
	q.lockedFold()
	q.lockedSend(&record{kind: recMsg, msg: end})
	if ks := q.keys[item]; ks != nil && ks.processing {
		ks.lastEnd = end
	}
	q.mu.Unlock()
}

// sendInOrder queues m (a message about one of q's reconciles, such as a write it made) for the editor in q's
// order: after every transition q reported before it, and so after the reconcile's start and before its end.
func (q *Queue) sendInOrder(m any) {
	q.mu.Lock()
	q.lockedFold()
	q.lockedSend(&record{kind: recMsg, msg: m})
	q.mu.Unlock()
}

// ---- the op log (oplog.go) ----

// claim claims a slot of the log for a hot op; when the log is full it folds it first. The caller must publish
// the slot, and loads gated only after this (oplog.go's handshake); when it finds the queue not gated it takes
// the op's place in the outbox's order with hotSeq, after that load.
func (q *Queue) claim() (*opSlot, uint64) {
	var freed uint64
	var since time.Time
	for yields := 0; ; yields++ {
		if s, pos := q.log.claim(); s != nil {
			return s, pos
		}
		if f := q.log.freed.Load(); f != freed || since.IsZero() {
			freed, since, yields = f, time.Now(), 0 // the writer is folding: keep leaving it the processor
		}
		if q.hub != nil && (yields < ringFullYields || q.hub.writer.Load() == writerRunning && time.Since(since) < ringFullWait) {
			// The writer is behind, usually because the controller's goroutines hold the processors (Go
			// preempts a busy goroutine only after 10 ms): give it the processor rather than fold here.
			q.hub.box.signal()
			if yields < ringFullYields {
				runtime.Gosched()
			} else {
				time.Sleep(ringFullNap) // not spin: the writer may be waiting for this very CPU
			}
			continue
		}
		q.mu.Lock()
		q.lockedFold()
		q.mu.Unlock()
	}
}

// hotSeq is the place in the outbox's order of a hot op whose slot the caller claimed and which found the queue
// not gated after that claim (0 without a hub). It must be taken after that load of gated, not at the claim: a
// gated slow path (a snapshot) may fold before the claim and push a record (its reply) after it; with a number
// taken before the load the op could sort before that record although the record's state lacks it, if the slow
// path ungated the queue before the load. Taken after a load that saw the queue ungated, the number is larger
// than any such record's (the slow path pushed it before it ungated), and smaller than that of any record pushed
// after the op's caller returns.
func (q *Queue) hotSeq() uint64 {
	if q.hub == nil {
		return 0
	}
	return q.hub.box.hot(q.seqIndex)
}

// A producer that finds the op log full yields its processor to the writer (oplog.go) and folds the log itself
// (where what the outbox cannot hold is dropped and counted) only once the writer freed nothing of it for
// ringFullYields yields and, while the writer is running (connected, not inside a write to the editor), for
// ringFullWait. The count and the time restart whenever the writer freed some: a producer does not fold while
// the writer keeps up, waits at most ringFullWait for a writer the machine did not schedule, and only a few
// yields for one the editor holds up (a write that does not return) or when there is no writer. After the
// yields it naps (ringFullNap) between looks instead of spinning.
const (
	ringFullYields = 4
	ringFullWait   = time.Millisecond
	// ringFullNap is the pause between looks after the yields.
	ringFullNap = 50 * time.Microsecond
)

// publish publishes a claimed slot (a no-op unless the caller filled it) and wakes the writer when it sleeps.
func (q *Queue) publish(s *opSlot, pos uint64) {
	s.publish(pos)
	if q.hub != nil {
		q.hub.box.signal()
	}
}

// lockedFold applies every op of the log to the keys' states and reports them, in log order (under q.mu),
// waiting for the ops claimed but not published yet (oplog.go's handshake needs that; lockedFoldPublished does
// not wait, for the writer).
func (q *Queue) lockedFold() { q.lockedFoldOps(true) }

// lockedFoldPublished is the writer's fold. It stops while the queue's spool is full (each op reports at most
// one transition): the ops left wait in the log for its next burst instead of being dropped. Only when the log
// is full too does a producer fold past that, and the outbox drops and counts what does not fit (the editor
// truly cannot keep up).
func (q *Queue) lockedFoldPublished() { q.lockedFoldOps(false) }

func (q *Queue) lockedFoldOps(wait bool) {
	for {
		if !wait && q.hub != nil && len(q.out.buf) >= q.hub.box.limit && !q.out.gone {
			q.log.release()
			return
		}
		e := q.log.next(wait)
		if e == nil {
			q.log.release()
			return
		}
		q.lockedApply(e)
		q.log.pop()
		if q.log.head&(opLogSize/4-1) == 0 {
			q.log.release() // a long fold frees room as it goes
		}
	}
}

// lockedApply applies one hot op with the slow path's logic (its stamp and its place in the outbox's order are
// the op's).
func (q *Queue) lockedApply(e *op) {
	switch e.kind {
	case opAdd:
		o := priorityqueue.AddOpts{}
		prio := int(e.prio)
		if e.hasPrio {
			o.Priority = &prio
		}
		c := causeFor(e.ev, o, e.key, e.at, q.forObj)
		q.lockedRecord(o, e.key, &c, e.ev == nil, time.Time{}, e.at, e.seq)
	case opHandOut:
		it := heldItem{key: e.key, priority: int(e.prio)}
		ks := q.lockedReadiedState(e.key)
		if ks == nil {
			ks = q.keys[e.key]
		}
		if ks != nil && ks.boosted {
			it.priority = ks.priority
		}
		q.lockedProcessing(it, nil, ks, e.at, e.seq)
	case opForget:
		q.lockedForget(e.key, e.at, e.seq, false)
	case opDone:
		if tok, end := q.lockedDone(e.key, e.at, e.seq); tok != nil {
			// Not expected (a step's Done gates the queue), answered all the same, outside q.mu.
			go tok.reply(ReplyMsg{ID: tok.id, OK: true, Reconcile: end})
		}
	}
}

// clampPrio is a priority as an op keeps it (int32: the editor's step boost, math.MaxInt, never reaches an op,
// since a pending step gates the queue).
func clampPrio(p int) int32 { return int32(max(math.MinInt32, min(math.MaxInt32, p))) }

// regate is lockedRegate under q.mu.
func (q *Queue) regate() {
	q.mu.Lock()
	q.lockedRegate()
	q.mu.Unlock()
}

// ---- helpers ----

func (q *Queue) state(item reconcile.Request) *keyState {
	ks := q.keys[item]
	if ks != nil && ks.idle {
		ks.idle = false
		q.idle--
	}
	if ks == nil {
		if n := len(q.free); n > 0 {
			ks, q.free = q.free[n-1], q.free[:n-1]
		} else {
			ks = &keyState{}
		}
		q.keys[item] = ks
	}
	return ks
}

// handedKey is a key handed out and its state (Queue.handed).
type handedKey struct {
	key reconcile.Request
	ks  *keyState
}

// lockedHanded is the state of item when it is one of the keys last handed out (nil otherwise), newest first.
func (q *Queue) lockedHanded(item reconcile.Request) *keyState {
	for i := range len(q.handed) {
		h := &q.handed[(q.handedNext+len(q.handed)-1-i)%len(q.handed)]
		if h.ks != nil && h.key == item {
			return h.ks
		}
	}
	return nil
}

// lockedReadiedState is the state of key when it is the oldest key remembered in q.readied (taken from it; the
// older entries whose keys are no longer queued are dropped first), nil otherwise.
func (q *Queue) lockedReadiedState(key reconcile.Request) *keyState {
	rr := &q.readied
	for rr.n > 0 {
		h := &rr.ents[rr.head]
		if h.key != key && h.ks.queued != notQueued {
			return nil // handed out in another order (priorities, delays): hash the key
		}
		ks := h.ks
		match := h.key == key
		*h = handedKey{}
		rr.head = (rr.head + 1) % readyRingSize
		rr.n--
		if match {
			return ks
		}
	}
	return nil
}

// lockedSweep deletes the idle states from q.keys (recycling them).
func (q *Queue) lockedSweep() {
	q.handed = [len(q.handed)]handedKey{}
	q.readied = readyRing{}
	for k, ks := range q.keys {
		if ks.idle {
			delete(q.keys, k)
			ks.idle = false
			q.lockedRecycle(ks)
		}
	}
	q.idle = 0
}

// lockedRecycle keeps the state of a key deleted from q.keys for reuse (its cause arrays, emptied).
func (q *Queue) lockedRecycle(ks *keyState) {
	if len(q.free) >= maxFree || ks.timer != nil || ks.stepReply != nil || ks.stepAdds > 0 {
		return
	}
	clear(ks.causes)
	clear(ks.triggers)
	*ks = keyState{causes: ks.causes[:0], triggers: ks.triggers[:0]}
	q.free = append(q.free, ks)
}

// stamp is the "at" of a hot transition: the hub's stampClock with the real clock (now.go), else the clock's
// time (tests' fake clocks stay exact).
func (q *Queue) stamp() int64 {
	if !q.realClock {
		return ms(q.clock.Now())
	}
	if q.hub != nil {
		return q.hub.stamps.stamp()
	}
	return ms(fastNow())
}

// now is the queue clock's time (fastNow for the real clock).
func (q *Queue) now() time.Time {
	if q.realClock {
		return fastNow()
	}
	return q.clock.Now()
}

// lockedAnyReady tells whether a key can be handed out without waiting for a due time: one held for a step or
// the resume, or one ready in the queue. A key that only waits (a requeue-after or a backoff retry not due yet)
// does not count: a step without key does not wait for it (the editor says which key is due next and when).
func (q *Queue) lockedAnyReady() bool {
	if len(q.held) > 0 {
		return true
	}
	for _, ks := range q.keys {
		if ks.queued == queuedReady {
			return true
		}
	}
	return false
}

// lockedNothingReady is why a step without key found nothing to run: an empty queue, or one whose keys all wait.
func (q *Queue) lockedNothingReady() string {
	for _, ks := range q.keys {
		if ks.queued == queuedWaiting {
			return "no key is ready: every queued key waits for its requeue-after or backoff retry"
		}
	}
	return "the queue holds no key"
}

// lockedWire is the key's wire id in the current generation (assigned now when it has none there; 0 when ks is
// nil or the generation's ids ran out, and the writer then looks the key up itself).
func (q *Queue) lockedWire(ks *keyState) uint64 {
	if ks == nil || q.hub == nil {
		return 0
	}
	cur := q.hub.keyIDs.Load()
	if ks.wire == 0 || ks.wire>>32 != cur>>32 {
		if cur&keyIDMask >= maxKeyIDs {
			return 0
		}
		ks.wire = q.hub.keyIDs.Add(1)
	}
	return ks.wire
}

// send hands a transition to the hub's outbox: it is appended to this queue's spool under q.mu (outbox.go's
// ordering contract). lockedSend is the same when the caller holds q.mu: a key's transitions are then sent in
// the order its state changed.
func (q *Queue) send(r *record) {
	if q.hub != nil {
		q.mu.Lock()
		q.hub.box.pushQueue(q, r, nil)
		q.mu.Unlock()
	}
}

func (q *Queue) lockedSend(r *record) {
	if q.hub != nil {
		q.hub.box.pushQueue(q, r, nil)
	}
}

// lockedOut is where a transition of this queue (the caller holds q.mu) is filled in place: a record reserved
// in q's spool (kind, q and seq set; 0: take one now), else tmp (no hub, the spool gone, or full: dropped and
// counted). After filling it the caller calls lockedOutDone(r, tmp, c), which sends tmp with its cause c (nil:
// none) when it must go elsewhere; a caller whose record has a cause appends it to q.out.causes itself when r is
// not tmp.
func (q *Queue) lockedOut(tmp *record, seq uint64) *record {
	r := tmp
	if q.hub != nil && !q.out.gone {
		if p := q.hub.box.lockedReserve(&q.out, seq); p != nil {
			r = p
		}
		seq = r.seq
	}
	r.kind, r.q, r.seq = recQueue, q, seq
	return r
}

func (q *Queue) lockedOutDone(r, tmp *record, c *Cause) {
	if r == tmp && q.hub != nil && q.out.gone {
		q.hub.box.push(tmp, c, 0)
	}
}

// lockedSendCause is lockedSend of a transition with one cause.
func (q *Queue) lockedSendCause(r *record, c *Cause) {
	if q.hub != nil {
		q.hub.box.pushQueue(q, r, c)
	}
}

func (ks *keyState) addCause(c *Cause) {
	if len(ks.causes) >= maxCauses {
		copy(ks.causes, ks.causes[1:])
		ks.causes = ks.causes[:len(ks.causes)-1]
		ks.dropped++
	}
	ks.causes = append(ks.causes, *c)
}

// takeCauses moves the causes since the last Get to ks.triggers (the previous triggers' array becomes the
// empty causes array).
func (ks *keyState) takeCauses() {
	if ks.dropped > 0 && len(ks.causes) > 0 {
		ks.causes[0].Note = joinNote(ks.causes[0].Note, "earlier causes dropped: "+itoa(ks.dropped))
	}
	clear(ks.triggers)
	ks.triggers, ks.causes, ks.dropped = ks.causes, ks.triggers[:0], 0
}

func (ks *keyState) lastCauseKind() string {
	if len(ks.causes) == 0 {
		return ""
	}
	return ks.causes[len(ks.causes)-1].Kind
}

func intPtr(i int) *int { return &i }

func ms(t time.Time) int64 { return t.UnixMilli() }
