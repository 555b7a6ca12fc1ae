package bridge

import (
	"fmt"
	"testing"
)

// TestOutboxOrderAcrossQueues: transitions of two controllers' queues, appended to their own spools, reach the
// writer merged in the order they happened (with the hub's own messages in between), each with its cause; a
// queue that shut down is drained and dropped from the sources, and what it sends after that is not lost.
func TestOutboxOrderAcrossQueues(t *testing.T) {
	h := newHub("", "", nil)
	a := newQueue(queueConfig{name: "a", hub: h})
	b := newQueue(queueConfig{name: "b", hub: h})
	t.Cleanup(a.ShutDown)
	t.Cleanup(b.ShutDown)
	h.box.take(burst{}) // the announcements

	var want []string
	for i := range 5 {
		a.Add(req(fmt.Sprint("a", i)))
		want = append(want, fmt.Sprintf("a ns/a%d added", i))
		b.Add(req(fmt.Sprint("b", i)))
		want = append(want, fmt.Sprintf("b ns/b%d added", i))
		if i == 2 {
			h.send(&PingMsg{At: 1})
			want = append(want, "ping")
		}
	}
	b.Forget(req("b0"))
	want = append(want, "b ns/b0 forgotten")
	got := describeBurst(h.box.take(burst{}))
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("order:\n got %v\nwant %v", got, want)
	}

	a.ShutDown()
	if got := describeBurst(h.box.take(burst{})); fmt.Sprint(got) != "[a  shutdown]" {
		t.Fatalf("after shutdown: %v", got)
	}
	h.box.take(burst{}) // a drained after its shutdown: dropped from the sources
	h.box.mu.Lock()
	n := len(h.box.sources)
	h.box.mu.Unlock()
	if n != 1 {
		t.Fatalf("sources after a's shutdown was drained: %d, want 1", n)
	}
	a.Forget(req("a1")) // after it is gone: through the hub's own spool, still in order
	b.Forget(req("b1"))
	if got := describeBurst(h.box.take(burst{})); fmt.Sprint(got) != "[a ns/a1 forgotten b ns/b1 forgotten]" {
		t.Fatalf("after a is gone: %v", got)
	}
	if h.box.pending() != 0 {
		t.Fatalf("pending after take: %d", h.box.pending())
	}
}

// describeBurst is "<controller> <key> <transition>" per queue record (with its cause checked), "ping" for a ping.
func describeBurst(bu burst) []string {
	var out []string
	for i := range bu.recs {
		switch m := bu.recs[i].message(bu.causes).(type) {
		case *QueueMsg:
			if m.Transition == "added" && (len(m.Causes) != 1 || m.Causes[0].Kind == "") {
				out = append(out, "missing cause")
			}
			out = append(out, m.Controller+" "+m.Key+" "+m.Transition)
		case *PingMsg:
			out = append(out, "ping")
		}
		if i > 0 && bu.recs[i].seq <= bu.recs[i-1].seq {
			out = append(out, "out of sequence")
		}
	}
	return out
}
