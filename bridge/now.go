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
