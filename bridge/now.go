package bridge

import (
	"sync/atomic"
	"time"
)

// fastNow is time.Now at about half the cost on the hot path: a wall-clock reading (with its monotonic part) is
// kept as a base and the current time is the base plus the monotonic time elapsed since it, which needs one
// monotonic clock read instead of a wall and a monotonic one. The base is refreshed once it is older than
// rebaseEvery, so a step of the wall clock shows within that time. Queue timestamps ("at", "dueAt") are
// milliseconds, far coarser than the drift this allows.
func fastNow() time.Time {
	if b := wallBase.Load(); b != nil {
		if d := time.Since(*b); d >= 0 && d < rebaseEvery {
			return b.Add(d)
		}
	}
	t := time.Now()
	wallBase.Store(&t)
	return t
}

const rebaseEvery = time.Second

var wallBase atomic.Pointer[time.Time]

// stampClock gives the "at" of the hot queue transitions (added now, processing, done, forgotten) in Unix
// milliseconds without reading the clock per transition: while the connection's writer is busy (live) it reads
// the clock once per burst and every stamp until the next burst is that reading; otherwise (writer asleep,
// no editor) a stamp reads the clock.
//
// Contracts:
//   - Stamps never go backwards (each reading is kept only when newer), except after the wall clock stepped
//     back by more than stepBack, which is taken as is.
//   - While live, a stamp is at most one writer cycle older than the true time (flushDelay plus the encoding
//     and write of one burst, about 1 ms on an idle machine); when not live it is exact.
//   - The precise times a key's due time depends on (waiting, backoff, ready after a wait) never come from
//     here.
type stampClock struct {
	ms   atomic.Int64
	live atomic.Bool
}

// stepBack is how far the wall clock must step back for a reading older than the last stamp to be taken.
const stepBack = 1000

// stamp is the current stamp (see the type's contract).
func (c *stampClock) stamp() int64 {
	if c.live.Load() {
		return c.ms.Load()
	}
	return c.refresh()
}

// refresh reads the clock and keeps the reading when it is newer (or the wall clock stepped back); it returns
// the kept stamp.
func (c *stampClock) refresh() int64 {
	t := time.Now().UnixMilli()
	for {
		old := c.ms.Load()
		if t <= old && t > old-stepBack {
			return old
		}
		if c.ms.CompareAndSwap(old, t) {
			return t
		}
	}
}
