package bridge

import (
	"bufio"
	"encoding/json"
	"net"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

// testEditor is the editor's side of the protocol for tests: a real unix-socket listener that answers hello with
// welcome (or reject for a wrong token) and collects every line the Go side sends.
type testEditor struct {
	t       *testing.T
	ln      net.Listener
	address string
	token   string
	paused  bool

	mu    sync.Mutex
	conns []net.Conn
	lines chan map[string]any
	hello chan HelloMsg
}

func newTestEditor(t *testing.T, paused bool) *testEditor {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bridge.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	e := &testEditor{t: t, ln: ln, address: "unix://" + path, token: "s3cret", paused: paused,
		lines: make(chan map[string]any, 100000), hello: make(chan HelloMsg, 16)}
	go e.accept()
	t.Cleanup(func() {
		ln.Close()
		e.dropAll()
	})
	return e
}

func (e *testEditor) accept() {
	for {
		c, err := e.ln.Accept()
		if err != nil {
			return
		}
		e.mu.Lock()
		e.conns = append(e.conns, c)
		e.mu.Unlock()
		go e.serve(c)
	}
}

func (e *testEditor) serve(c net.Conn) {
	r := bufio.NewReaderSize(c, 1<<20)
	first := true
	frames := NewTransitionDecoder()
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		// A transitions frame is seen as the queue messages it stands for.
		if qs, ok, err := frames.ExpandLine(line); ok {
			if err != nil {
				e.t.Errorf("bad transitions frame from Go: %v: %q", err, line)
				return
			}
			for _, q := range qs {
				e.lines <- q
			}
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			e.t.Errorf("bad line from Go: %q", line)
			return
		}
		if first {
			first = false
			var h HelloMsg
			_ = json.Unmarshal(line, &h)
			if m["type"] != "hello" || h.Token != e.token {
				_, _ = c.Write([]byte(`{"type":"reject","reason":"bad token"}` + "\n"))
				c.Close()
				return
			}
			e.hello <- h
			w, _ := encodeLine(&WelcomeMsg{Protocol: ProtocolVersion, Paused: e.paused})
			_, _ = c.Write(w)
			continue
		}
		if m["type"] == "ping" {
			continue
		}
		e.lines <- m
	}
}

// command sends one command on the newest connection.
func (e *testEditor) command(c CommandMsg) {
	e.t.Helper()
	e.mu.Lock()
	conn := e.conns[len(e.conns)-1]
	e.mu.Unlock()
	line, _ := encodeLine(&c)
	if _, err := conn.Write(line); err != nil {
		e.t.Fatal(err)
	}
}

// dropAll closes every accepted connection (the editor restarting).
func (e *testEditor) dropAll() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, c := range e.conns {
		c.Close()
	}
}

// next returns the next line matching pred (others are skipped), failing after 10 s.
func (e *testEditor) next(pred func(map[string]any) bool) map[string]any {
	e.t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case m := <-e.lines:
			if pred(m) {
				return m
			}
		case <-timeout:
			e.t.Fatal("timed out waiting for a message from the Go side")
			return nil
		}
	}
}

func isType(typ string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["type"] == typ }
}

// connectedHub starts a hub connected to e and waits for the welcome.
func connectedHub(t *testing.T, e *testEditor) *hub {
	t.Helper()
	h := newHub(e.address, e.token, nil)
	if !h.start(10 * time.Second) {
		t.Fatal("no welcome")
	}
	t.Cleanup(h.close)
	return h
}

// eventually waits (yielding, never sleeping) until cond holds, failing after 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		runtime.Gosched()
	}
}
