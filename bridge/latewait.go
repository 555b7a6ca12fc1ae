package bridge

import (
	"time"

	"k8s.io/utils/clock"

	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// A delayed add that client-go's delaying queue still holds.
//
// With the priority queue turned off, controller-runtime's queue is client-go's rate-limited queue, whose delaying
// queue keeps every AddAfter (a RequeueAfter, a backoff retry) until it is due, whatever happens to the key
// meanwhile: an Add (an informer event, Reset Backoff, a step) makes the key ready now but does not drop the wait,
// and an AddAfter or a backoff of a key already queued is kept too. When it is due, client-go adds the key again —
// one more reconcile, after the one the add ran. (The priority queue drops a wait when the key is added, and
// ignores an AddAfter of a ready key.) The shadow state keeps such a wait as the key's late wait and, when it is
// due, records the add client-go makes then, with the wait's cause, so that reconcile is not shown without a
// cause and the queue is not shown empty while client-go is about to hand the key out. client-go keeps one wait
// per key (the earliest due time), so a key's late wait and its ordinary wait never coexist: lockedWait merges
// them.

// lateWait is a key's wait that client-go's delaying queue holds while the key is ready, processing or idle.
type lateWait struct {
	due   time.Time
	timer clock.Timer
	cause Cause
}

// lockedKeepLate records that client-go still holds a wait for item until due (the earlier one is kept), with
// the cause that started it. Client-go's queue only; under q.mu.
func (q *Queue) lockedKeepLate(item reconcile.Request, ks *keyState, due time.Time, c Cause) {
	if q.priority || q.down {
		return
	}
	if l := ks.late; l != nil {
		if !due.Before(l.due) {
			return
		}
		l.timer.Stop()
	}
	l := &lateWait{due: due, cause: c}
	l.timer = q.clock.AfterFunc(due.Sub(q.clock.Now()), func() { go q.lateDue(item, l) })
	ks.late = l
}

// lockedTakeLate removes the key's late wait and returns its due time (zero when none). Under q.mu.
func (q *Queue) lockedTakeLate(ks *keyState) time.Time {
	l := ks.late
	if l == nil {
		return time.Time{}
	}
	l.timer.Stop()
	ks.late = nil
	return l.due
}

// waitCause is the cause of the key's current wait (its latest backoff or requeue-after cause), for a wait
// that becomes a late one.
func (ks *keyState) waitCause(at int64) Cause {
	for i := len(ks.causes) - 1; i >= 0; i-- {
		if k := ks.causes[i].Kind; k == CauseBackoff || k == CauseRequeueAfter {
			return ks.causes[i]
		}
	}
	return Cause{Kind: CauseRequeueAfter, At: at}
}

// lockedLateHandedOut: the key is handed out while it has a late wait. Once that wait is due, client-go's add for
// it may come before the timer of lateDue (both fire at the due time; a worker takes the key at once): the wait is
// then over and its cause is one of this reconcile's triggers. A wait not due yet stays. Under q.mu.
func (q *Queue) lockedLateHandedOut(ks *keyState) {
	l := ks.late
	// The clock, not the hand-out's stamp (which may be read up to a burst early): a key client-go handed out for
	// this wait was handed out after it was due, so now is too.
	if q.clock.Now().Before(l.due) {
		return
	}
	l.timer.Stop()
	ks.late = nil
	ks.addCause(&l.cause)
}

// lateDue is client-go's add of a key when its late wait l is due: nothing when the key is queued (client-go's
// Add of a queued key changes nothing), else the key is added (or marked to run again after the reconcile in
// progress) with the wait's cause.
func (q *Queue) lateDue(item reconcile.Request, l *lateWait) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.lockedFold()
	ks := q.keys[item]
	if q.down || ks == nil || ks.late != l {
		return
	}
	ks.late = nil
	if ks.queued == queuedReady {
		return
	}
	now := q.now()
	c := l.cause
	q.lockedRecord(priorityqueue.AddOpts{}, item, &c, false, now, ms(now), 0)
}
