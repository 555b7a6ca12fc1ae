package bridge

import (
	"runtime"
	"sync/atomic"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// The op log is how a queue's hot operations (an Add now, a hand-out by Get, Forget, Done) reach the key's state
// without taking the queue's lock: the calling goroutine appends a small fixed-size op to the queue's log (a
// lock-free bounded ring, many producers, one consumer at a time) and returns. Whoever holds Queue.mu folds the
// log (Queue.lockedFold): the connection's writer at each burst, and every slow path (editor commands, an Add
// after a delay, a backoff, the reconciler wrapper's triggers) before it reads or changes a key's state. The
// fold applies the ops in log order with exactly the logic the slow path uses, so a key's state is always the
// fold of its operations in the order they were logged, only later.
//
// Contracts:
//   - claim/publish: a producer claims the next slot (one compare-and-swap of tail), fills it and publishes it.
//     A claimed slot is always published within a few instructions, without taking any lock or calling into the
//     inner queue (a producer that finds the queue gated after its claim publishes a no-op and takes the slow
//     path), so a fold that waits for a claimed slot never waits for a lock (the priority queue calls the rate
//     limiter, and so Queue.onBackoff and its fold, under its own lock).
//   - An op's place in the log is its claim: a producer logs before the inner-queue call that lets another
//     goroutine's op follow it (Add before the inner Add, Done before the inner Done) and after the one it
//     follows (a hand-out after the inner Get returned), so a key's ops are in the order the inner queue saw.
//   - Dekker handshake with Queue.gated: a producer claims its slot before it loads gated; a slow path that must
//     not race with hot ops (pause, step, shutdown) stores gated = true before it folds. Either the producer
//     sees gated (and goes the slow way, under Queue.mu) or the fold sees its claim and applies the op first.
//   - Nothing is lost: when the ring is full the producer first yields its processor (the writer, starved by
//     the controller's own goroutines, usually runs then and folds) and naps while a running writer frees the
//     ring (Queue.claim: at most ringFullWait without progress, never for a writer inside a write), then folds
//     the log itself under Queue.mu and claims again.
//   - Only the holder of Queue.mu consumes (head is guarded by it). The consumer never writes a slot: it
//     publishes how far it consumed in freed (once per fold, not per op), and a producer may claim position pos
//     only while pos < freed + size. So a slot's cache line moves from its producer to the consumer and back
//     once per round, and a consumed slot keeps its op's references (at most opLogSize keys and informer
//     events stay reachable until overwritten).
type opLog struct {
	// mask and ops never change (read by every claim: on a line nothing writes).
	mask uint64
	ops  []opSlot
	_    [32]byte
	tail atomic.Uint64
	_    [56]byte // tail is written by producers; keep it off the consumer's and the slots' cache lines
	// freed: every position below it was consumed (written by the consumer once per fold, read by producers).
	freed atomic.Uint64
	_     [56]byte
	// head is written by the consumer at every op it folds.
	head uint64
}

// opLogSize is the ring's capacity (a power of two; 72 bytes an op, about 1.2 MB). The writer folds every burst
// (about every millisecond while busy); the ring holds as many ops as the outbox buffers records (outBuffer), so
// a writer that falls behind a busy controller for a while costs the controller nothing until the buffer of
// transitions would overflow anyway. A full ring costs the producer a fold, never an op.
const opLogSize = 16384

// opKind is what a hot op did.
type opKind uint8

const (
	opNop opKind = iota
	// opAdd: an add now (no delay, not rate limited), with the informer event being dispatched (or nil) and the
	// add's priority when hasPrio.
	opAdd
	// opHandOut: Get handed the key out with prio while the queue was not gated.
	opHandOut
	opForget
	opDone
)

// opSlot is one entry of the ring. turn is pos+1 once the producer of position pos published it (whether the
// slot is free for a producer is told by opLog.freed, not by the slot: turns only grow, so a stale turn never
// equals the next round's pos+1).
type opSlot struct {
	turn atomic.Uint64
	op   op
}

// op is one hot queue operation: about 80 bytes, no allocation (the key is the reconcile.Request itself, the
// informer event a pointer to the immutable event of the handler call).
type op struct {
	kind    opKind
	hasPrio bool
	prio    int32
	key     reconcile.Request
	ev      *informerEvent
	// at is the transition's stamp; seq its place in the outbox's process-wide order (Queue.hotSeq, taken
	// after the claim, once the producer found the queue not gated).
	at  int64
	seq uint64
}

func newOpLog() *opLog {
	return &opLog{mask: opLogSize - 1, ops: make([]opSlot, opLogSize)}
}

// claim reserves the next slot for the caller (who must publish it); nil when the ring is full.
func (l *opLog) claim() (*opSlot, uint64) {
	for {
		pos := l.tail.Load()
		if pos-l.freed.Load() >= opLogSize {
			return nil, 0 // the slot still holds the op of pos - size, not consumed yet
		}
		// freed only grows: the slot stays free whoever wins the claim.
		if l.tail.CompareAndSwap(pos, pos+1) {
			return &l.ops[pos&l.mask], pos
		}
	}
}

// publish makes the op filled into the slot claimed at pos visible to the fold.
func (s *opSlot) publish(pos uint64) { s.turn.Store(pos + 1) }

// next is the oldest published op (nil when the log is empty). A slot claimed but not published yet is waited
// for when wait is set (its producer publishes without blocking), else next returns nil there. Only the holder
// of Queue.mu calls next and pop.
func (l *opLog) next(wait bool) *op {
	s := &l.ops[l.head&l.mask]
	for spins := 0; ; spins++ {
		t := s.turn.Load()
		if t == l.head+1 {
			return &s.op
		}
		if !wait || l.tail.Load() == l.head {
			return nil
		}
		if spins > 16 {
			runtime.Gosched()
		}
	}
}

// pop consumes the op next returned; the slot is handed back to producers at the next release.
func (l *opLog) pop() { l.head++ }

// release lets producers reuse every slot consumed so far (after a fold).
func (l *opLog) release() {
	if l.freed.Load() != l.head {
		l.freed.Store(l.head)
	}
}

// empty reports whether nothing was claimed beyond what was folded.
func (l *opLog) empty() bool { return l.tail.Load() == l.head }
