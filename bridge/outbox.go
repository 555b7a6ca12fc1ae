package bridge

import (
	"slices"
	"sync"
	"sync/atomic"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// The outbox holds the messages waiting for the editor as fixed-size records, in spools: one per controller's
// queue (its transitions) and one for everything else (replies, announcements, reconcile start/end, writes).
//
// Why records: a queue transition happens several times per reconcile on the controller's hot path. Building a
// message struct, a key string and a causes slice per transition, boxing it in an interface and encoding it
// with reflection cost more than the queue operation itself. A transition is instead copied into a record of
// about 110 bytes (no heap allocation: the key is the reconcile.Request itself; its cause, when it has one, is
// copied into a parallel slice of causes) appended to a slice that is reused; the connection's writer goroutine
// swaps the filled slices for empty ones, merges them, encodes every record with the hand-written encoder
// (encode.go: a frame per run of one queue's transitions) into one reused buffer and writes the whole burst with
// one write call.
//
// Why spools: a queue's transitions are appended under the queue's own lock (Queue.mu), by whoever folds the
// queue's op log (oplog.go: the hot operations only append an op there and take no lock) or by a slow path that
// holds it anyway; the other messages go to the outbox's own spool under outbox.mu.
//
// Ordering contract:
//   - Every record has a process-wide sequence number. outbox.seq holds a counter and the index of the queue
//     whose hot op last took a number (seqQueueBits). A record pushed under its spool's lock (any message, a
//     slow path's transition) increments the counter and takes 2 × counter (outbox.next). A hot op, once it
//     claimed its slot in the op log and found the queue not gated (Queue.hotSeq: not at the claim, so a gated
//     slow path's record, such as a snapshot's reply, never sorts after an op its state lacks), takes
//     2 × counter + 1 (outbox.hot): when the last hot op to take a number was its own queue's, it only reads
//     the word (a busy controller's goroutines then never write this shared word); otherwise it increments the counter and stores its queue's index, in one compare-and-swap. So the
//     numbers order every record consistently with the order of their operations: a key's transitions are in
//     the order its state changed (oplog.go: a key's ops are logged in the order the inner queue saw them, and
//     every slow path folds the log before it changes a key's state); a hot op after a pushed record sorts
//     after it, one before sorts before it; a hot op after another queue's hot op gets a larger number (the
//     word named the other queue, or a later increment named this one); a message sent after a transition (a
//     step's reply after its Done, a reconcileStart after the hand-out, whose triggers fold the log) gets a
//     larger number. Only hot ops of one queue share a number, and they keep their log order (a spool is never
//     reordered). Within a spool records are in that order except for ops claimed concurrently on one queue by
//     different goroutines (their numbers may be in either order; their keys' states did not depend on each
//     other).
//   - take merges the spools by sequence number (a spool's own order kept on ties): the editor receives every
//     record in that order, across every controller of the process; nothing is coalesced.
//   - A queue stays a source until it was unregistered (shut down) and drained; records it sends after that go to
//     the outbox's own spool, so nothing is left behind.
//
// Other contracts:
//   - push never blocks on the editor: when limit records wait in a spool, a hot message (queue transition,
//     reconcile start/end, write) is dropped and counted in dropped; control messages (replies, controller
//     announcements) have ctrlBuffer more room, so a reply is not lost to a burst of transitions. The bound is per
//     spool (a process with n controllers buffers at most (n+1) × limit records).
//   - A record's references (message pointer) are not mutated by the sender after push.
//   - The writer is woken only when it is about to sleep (waiting is set) and a record arrives: a busy controller
//     never touches a channel (one atomic load per record).
type outbox struct {
	// seq: the order's counter << seqQueueBits | the index of the queue whose hot op took the last number.
	seq     atomic.Uint64
	waiting atomic.Bool
	// queues counts the queues given an index (queueIndex).
	queues  atomic.Uint64
	wake    chan struct{}
	limit   int
	dropped atomic.Int64

	// mu guards own and sources. Lock order: a Queue's mu before outbox.mu (never the reverse).
	mu      sync.Mutex
	own     spool
	sources []*Queue
	// parts and srcs are take's scratch (only the caller of take uses them, one at a time).
	parts []takenPart
	srcs  []*Queue
}

// spool is one source's waiting records, guarded by its owner's lock (Queue.mu for a queue's spool, outbox.mu
// for the outbox's own). spare is the emptied burst the writer gave back, installed at the next take.
type spool struct {
	buf    []record
	causes []Cause
	spare  burst
	// retired: the queue shut down; gone: the writer drained it after that and dropped it from the sources, so
	// its later records go to the outbox's own spool (Queue spools only).
	retired, gone bool
}

type takenPart struct {
	q *Queue
	b burst
	i int
}

// initialRecords is the starting capacity of the outbox's slice and of the writer's spare (they swap, so both
// grow to the largest burst once and are reused from then on).
const initialRecords = 1024

func newOutbox(limit int) *outbox {
	return &outbox{limit: limit, wake: make(chan struct{}, 1)}
}

// recKind tells which fields of a record are set.
type recKind uint8

const (
	// recQueue is one per-key transition of a controller's queue (a "queue" message).
	recQueue recKind = iota + 1
	// recMsg carries any protocol message by pointer (msg).
	recMsg
)

// transition is a queue transition's index in transitionNames.
type transition uint8

const (
	trAdded transition = iota
	trWaiting
	trReady
	trProcessing
	trDone
	trForgotten
	trBackoff
	trShutdown
)

// transitionNames: a transition's code on the wire is its index (protocol.json "transitions").
var transitionNames = TransitionNames

// record is one message waiting for the editor. For recQueue it is the QueueMsg
// {Controller: q.name, Key: requestKey(key) (empty when noKey), Transition, Priority (when hasPrio), DueAt,
// DelayMs, Failures, Causes: [the burst's causes[cause-1]] when cause > 0, At}, sent as one item of a TransitionsMsg
// frame. About 100 bytes: the cause lives in the burst's causes (see outbox.causes).
type record struct {
	kind    recKind
	tr      transition
	hasPrio bool
	noKey   bool
	// plain: the cause is plainCause(at), kept by no burst (cause is then 0).
	plain bool
	cause int32
	seq   uint64
	// wire is the key's wire id as the hot path assigned it (keyState.wire: generation << 32 | id), 0 when none.
	wire     uint64
	q        *Queue
	key      reconcile.Request
	prio     int
	failures int
	dueAt    int64
	delayMs  int64
	at       int64
	msg      any
}

// message is the protocol message a record stands for (tests); causes are its burst's causes.
func (r *record) message(causes []Cause) any {
	if r.kind == recMsg {
		return r.msg
	}
	m := &QueueMsg{Controller: r.q.name, Transition: transitionNames[r.tr], DueAt: r.dueAt, DelayMs: r.delayMs,
		Failures: r.failures, At: r.at}
	if !r.noKey {
		m.Key = requestKey(r.key)
	}
	if r.hasPrio {
		m.Priority = intPtr(r.prio)
	}
	if r.cause > 0 {
		m.Causes = []Cause{causes[r.cause-1]}
	} else if r.plain {
		m.Causes = []Cause{plainCause(r.at)}
	}
	return m
}

// lockedRoom makes room for one more record in sp (whose owner's lock the caller holds), extra beyond limit
// allowed; false, with the record counted as dropped, when sp is full. It doubles a full buffer at once (append
// grows large slices by 1.25×, copying ~110-byte records many times over while a backlog builds); the spool and
// the writer's spare swap, so each grows to the largest burst once.
func (o *outbox) lockedRoom(sp *spool, extra int) bool {
	if len(sp.buf) >= o.limit+extra {
		o.dropped.Add(1)
		return false
	}
	if sp.buf == nil {
		sp.buf = make([]record, 0, initialRecords)
	} else if len(sp.buf) == cap(sp.buf) {
		nb := make([]record, len(sp.buf), min(2*cap(sp.buf)+1, o.limit+ctrlBuffer))
		copy(nb, sp.buf)
		sp.buf = nb
	}
	return true
}

// lockedPush appends a copy of *r with a copy of *c as its cause (none when c is nil; it sets r.cause and
// r.seq) to sp, whose owner's lock the caller holds; extra is the room beyond limit this message may use
// (ctrlBuffer for control messages, 0 otherwise). It reports false when the record was dropped.
func (o *outbox) lockedPush(sp *spool, r *record, c *Cause, extra int) bool {
	if !o.lockedRoom(sp, extra) {
		return false
	}
	if c != nil {
		sp.causes = append(sp.causes, *c)
		r.cause = int32(len(sp.causes))
	}
	if r.seq == 0 {
		r.seq = o.next()
	}
	sp.buf = append(sp.buf, *r)
	o.signal()
	return true
}

// lockedReserve appends a zero record to sp (whose owner's lock the caller holds) for the caller to fill in
// place before it unlocks, with seq as its place in the order (0: take one now); nil when sp is full (the
// record is dropped and counted). lockedPush without building the record first.
func (o *outbox) lockedReserve(sp *spool, seq uint64) *record {
	if !o.lockedRoom(sp, 0) {
		return nil
	}
	if seq == 0 {
		seq = o.next()
	}
	sp.buf = sp.buf[:len(sp.buf)+1]
	r := &sp.buf[len(sp.buf)-1]
	*r = record{seq: seq}
	o.signal() // the writer reads the record only under the owner's lock, so after it is filled
	return r
}

// seqQueueBits is the width of the queue index in outbox.seq (indexes wrap: two queues 65,536 creations apart
// share one, and their hot ops between two other records may then reach the editor in either order); the
// counter has the remaining 48 bits.
const seqQueueBits = 16

// next is the place in the order of a record pushed now (even: 2 × the incremented counter).
func (o *outbox) next() uint64 { return o.seq.Add(1<<seqQueueBits) >> seqQueueBits << 1 }

// hot is the place in the order of a hot op of the queue with index idx claimed now (odd; see the ordering
// contract): a read when the last number went to this queue, else one compare-and-swap.
func (o *outbox) hot(idx uint64) uint64 {
	for {
		w := o.seq.Load()
		if w&(1<<seqQueueBits-1) == idx {
			return w>>seqQueueBits<<1 | 1
		}
		n := (w>>seqQueueBits+1)<<seqQueueBits | idx
		if o.seq.CompareAndSwap(w, n) {
			return n>>seqQueueBits<<1 | 1
		}
	}
}

// queueIndex is the index of a new queue in outbox.seq (never 0, the word's initial index).
func (o *outbox) queueIndex() uint64 {
	for {
		if i := o.queues.Add(1) & (1<<seqQueueBits - 1); i != 0 {
			return i
		}
	}
}

// signal wakes the writer when it is about to sleep (one atomic load otherwise).
func (o *outbox) signal() {
	if o.waiting.Load() && o.waiting.CompareAndSwap(true, false) {
		select {
		case o.wake <- struct{}{}:
		default:
		}
	}
}

// push is lockedPush to the outbox's own spool.
func (o *outbox) push(r *record, c *Cause, extra int) bool {
	o.mu.Lock()
	ok := o.lockedPush(&o.own, r, c, extra)
	o.mu.Unlock()
	return ok
}

// pushQueue is lockedPush of a transition of q, under q.mu: to q's spool, or to the outbox's own once q is gone.
func (o *outbox) pushQueue(q *Queue, r *record, c *Cause) bool {
	if q.out.gone {
		return o.push(r, c, 0)
	}
	return o.lockedPush(&q.out, r, c, 0)
}

// addSource makes q's spool a source of take; retire marks it shut down (dropped once drained).
func (o *outbox) addSource(q *Queue) {
	o.mu.Lock()
	o.sources = append(o.sources, q)
	o.mu.Unlock()
}

func (o *outbox) retire(q *Queue) {
	q.mu.Lock()
	q.out.retired = true
	q.mu.Unlock()
}

// burst is what the writer takes from the outbox at once: records in sequence order and their causes.
type burst struct {
	recs   []record
	causes []Cause
}

// take returns every waiting record of every spool merged in sequence order (with their causes), in out's
// slices (emptied first; nil slices grow). When nothing waits it marks the writer waiting, so the next push
// signals wake. Only one goroutine calls take at a time (the connection's writer, or a test).
func (o *outbox) take(out burst) burst {
	out.recs, out.causes = out.recs[:0], out.causes[:0]
	// Waiting first, then look: a push that the look misses happens after the store, sees waiting and wakes.
	o.waiting.Store(true)
	parts := o.parts[:0]
	var drained []*Queue
	o.mu.Lock()
	sources := append(o.srcs[:0], o.sources...)
	o.srcs = sources
	o.mu.Unlock()
	// The queues' spools first, the hub's own spool last. A record's sequence number is taken when it is pushed
	// (under its spool's lock) or, for a hot op, when it is logged, so a record pushed to a spool after that
	// spool was taken can have a lower number than one taken from a later spool; it then goes out in the next
	// burst, after it. Taking the own spool last means such an inversion can only put a hub message (a reply, an
	// announcement) before an older transition of a queue, never a transition before an older hub message: a
	// snapshot reply is never read after a transition it does not contain (the editor rebuilt the queue's state
	// from it and would forget that transition). A reconcile's own messages travel in its queue's spool.
	for _, q := range sources {
		q.mu.Lock()
		q.lockedFoldPublished()
		sp := &q.out
		if len(sp.buf) > 0 {
			parts = append(parts, takenPart{q: q, b: burst{sp.buf, sp.causes}})
			sp.buf, sp.causes = sp.spare.recs[:0], sp.spare.causes[:0]
			sp.spare = burst{}
		} else if sp.retired {
			sp.gone = true
			drained = append(drained, q)
		}
		q.mu.Unlock()
	}
	clear(sources)
	o.mu.Lock()
	if len(o.own.buf) > 0 {
		parts = append(parts, takenPart{b: burst{o.own.buf, o.own.causes}})
		o.own.buf, o.own.causes = o.own.spare.recs[:0], o.own.spare.causes[:0]
		o.own.spare = burst{}
	}
	o.mu.Unlock()
	if len(drained) > 0 {
		o.mu.Lock()
		kept := o.sources[:0]
		for _, q := range o.sources {
			if !slices.Contains(drained, q) {
				kept = append(kept, q)
			}
		}
		clear(o.sources[len(kept):])
		o.sources = kept
		o.mu.Unlock()
	}
	if len(parts) > 0 {
		o.waiting.Store(false)
	}
	if len(parts) == 1 {
		// One source (the usual burst of one busy controller): its slices are the burst, no copy; out's empty
		// slices become its spare.
		p := &parts[0]
		spare := burst{out.recs[:0], out.causes[:0]}
		out = p.b
		o.giveSpare(p, spare)
		o.parts = parts[:0]
		return out
	}
	// Merge by sequence number (few parts: a linear scan of their heads).
	for {
		best := -1
		for i := range parts {
			p := &parts[i]
			if p.i < len(p.b.recs) && (best < 0 || p.b.recs[p.i].seq < parts[best].b.recs[parts[best].i].seq) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		p := &parts[best]
		r := p.b.recs[p.i]
		p.i++
		if r.cause > 0 {
			out.causes = append(out.causes, p.b.causes[r.cause-1])
			r.cause = int32(len(out.causes))
		}
		out.recs = append(out.recs, r)
	}
	// Give the emptied slices back as the spools' spares (their references dropped first).
	for i := range parts {
		p := &parts[i]
		clear(p.b.recs)
		clear(p.b.causes)
		o.giveSpare(p, burst{p.b.recs[:0], p.b.causes[:0]})
	}
	o.parts = parts[:0]
	return out
}

// giveSpare hands spare (empty slices, references already dropped) to the spool p was taken from, under that
// spool's lock, as the buffers its next pushes fill; p is cleared.
func (o *outbox) giveSpare(p *takenPart, spare burst) {
	if p.q == nil {
		o.mu.Lock()
		o.own.spare = spare
		o.mu.Unlock()
	} else {
		p.q.mu.Lock()
		p.q.out.spare = spare
		p.q.mu.Unlock()
	}
	*p = takenPart{}
}

// pending is the number of records waiting.
func (o *outbox) pending() int {
	o.mu.Lock()
	n := len(o.own.buf)
	sources := append([]*Queue(nil), o.sources...)
	o.mu.Unlock()
	for _, q := range sources {
		q.mu.Lock()
		q.lockedFold()
		n += len(q.out.buf)
		q.mu.Unlock()
	}
	return n
}
