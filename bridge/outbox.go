package bridge

import (
	"sync"
	"sync/atomic"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// The outbox holds the messages waiting for the editor, in the order they were sent, as fixed-size records.
//
// Why records: a queue transition happens several times per reconcile on the controller's hot path. Building a
// message struct, a key string and a causes slice per transition, boxing it in an interface and encoding it
// with reflection cost more than the queue operation itself. A transition is instead copied into a record of
// about 100 bytes (no heap allocation: the key is the reconcile.Request itself; its cause, when it has one, is
// copied into a parallel slice of causes) appended to a slice that is reused, under the outbox's lock; the
// connection's writer goroutine swaps the filled slices for empty ones, encodes every record with the
// hand-written encoder (encode.go: a frame per run of one queue's transitions) into one reused buffer and writes
// the whole burst with one write call.
//
// Contracts:
//   - push never blocks on the editor: when limit records are waiting, a hot message (queue transition,
//     reconcile start/end, write) is dropped and counted in dropped; control messages (replies, controller
//     announcements) have ctrlBuffer more room, so a reply is not lost to a burst of transitions.
//   - Records leave in push order (one lock orders every sender); nothing is coalesced.
//   - A record's references (message pointer) are not mutated by the sender after push.
//   - The writer is woken only when it sleeps (waiting is set) and the outbox goes non-empty: a busy controller
//     never touches a channel.
type outbox struct {
	mu  sync.Mutex
	buf []record
	// causes holds the causes of the records in buf (a record's cause field is its index + 1): a cause is 168
	// bytes and most records have none, so keeping it out of the record keeps every copy of a record small.
	causes  []Cause
	waiting bool
	wake    chan struct{}
	limit   int
	dropped atomic.Int64
}

// initialRecords is the starting capacity of the outbox's slice and of the writer's spare (they swap, so both
// grow to the largest burst once and are reused from then on).
const initialRecords = 1024

func newOutbox(limit int) *outbox {
	return &outbox{limit: limit, wake: make(chan struct{}, 1), buf: make([]record, 0, initialRecords), causes: make([]Cause, 0, initialRecords)}
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
	kind     recKind
	tr       transition
	hasPrio  bool
	noKey    bool
	cause    int32
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
	}
	return m
}

// push appends a copy of *r with a copy of *c as its cause (none when c is nil; push sets r.cause); extra is the
// room beyond limit this message may use (ctrlBuffer for control messages, 0 otherwise). It reports false when
// the record was dropped.
func (o *outbox) push(r *record, c *Cause, extra int) bool {
	o.mu.Lock()
	if len(o.buf) >= o.limit+extra {
		o.mu.Unlock()
		o.dropped.Add(1)
		return false
	}
	if len(o.buf) == cap(o.buf) {
		// Double at once (append grows large slices by 1.25×, copying ~300-byte records many times over while a
		// backlog builds); the outbox and the writer's spare swap, so each grows to the largest burst once.
		nb := make([]record, len(o.buf), min(2*cap(o.buf)+1, o.limit+ctrlBuffer))
		copy(nb, o.buf)
		o.buf = nb
	}
	if c != nil {
		if len(o.causes) == cap(o.causes) {
			nc := make([]Cause, len(o.causes), 2*cap(o.causes)+1)
			copy(nc, o.causes)
			o.causes = nc
		}
		o.causes = append(o.causes, *c)
		r.cause = int32(len(o.causes))
	}
	o.buf = append(o.buf, *r)
	wake := o.waiting
	o.waiting = false
	o.mu.Unlock()
	if wake {
		select {
		case o.wake <- struct{}{}:
		default:
		}
	}
	return true
}

// burst is what the writer takes from the outbox at once: records in push order and their causes.
type burst struct {
	recs   []record
	causes []Cause
}

// take returns every waiting record (with their causes) and installs spare's slices (emptied) as the new
// buffers. When nothing waits it returns empty slices and marks the writer waiting, so the next push signals
// wake.
func (o *outbox) take(spare burst) burst {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.buf) == 0 {
		o.waiting = true
		return burst{spare.recs[:0], spare.causes[:0]}
	}
	out := burst{o.buf, o.causes}
	o.buf, o.causes = spare.recs[:0], spare.causes[:0]
	return out
}

// pending is the number of records waiting.
func (o *outbox) pending() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.buf)
}
