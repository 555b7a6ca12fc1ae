package bridge

import (
	"testing"
	"time"
)

// TestEffectiveWorkersAndTimeout: the worker count and timeout the editor is told are the ones controller-runtime
// applies (a controller's own value when set, else the manager's, else 1 worker / no timeout), not the larger one.
func TestEffectiveWorkersAndTimeout(t *testing.T) {
	for _, c := range []struct{ own, manager, want int }{{0, 0, 1}, {0, 4, 4}, {1, 4, 1}, {3, 0, 3}, {-1, 2, 2}} {
		if got := effectiveWorkers(c.own, c.manager); got != c.want {
			t.Errorf("effectiveWorkers(%d, %d) = %d, want %d", c.own, c.manager, got, c.want)
		}
	}
	for _, c := range []struct{ own, manager, want time.Duration }{{0, 0, 0}, {0, time.Minute, time.Minute}, {time.Second, time.Minute, time.Second}} {
		if got := effectiveTimeout(c.own, c.manager); got != c.want {
			t.Errorf("effectiveTimeout(%v, %v) = %v, want %v", c.own, c.manager, got, c.want)
		}
	}
}
