// Package bridgetest is the editor's side of the bridge protocol for Go tests of a controller that uses the
// bridge: a real unix-socket listener that answers hello with welcome, records every message and sends commands.
// Point the process at it with t.Setenv(bridge.EnvAddress, e.Address) and t.Setenv(bridge.EnvToken, e.Token)
// before the first bridge call (the bridge reads the environment once per process).
package bridgetest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/reconcile-lab/reconcile-lab/bridge"
)

// Editor is a fake-free editor endpoint: it speaks the real protocol over a real socket.
type Editor struct {
	Address, Token string
	// Paused is sent in welcome.
	Paused bool

	t      testing.TB
	ln     net.Listener
	mu     sync.Mutex
	conn   net.Conn
	all    []map[string]any
	signal chan struct{}
	nextID int64
}

// Listen starts an editor on a unix socket in a fresh 0700 directory; it is closed when the test ends.
func Listen(t testing.TB, paused bool) *Editor {
	t.Helper()
	dir, err := os.MkdirTemp("", "rlab-bridge-")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "b.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	e := &Editor{Address: "unix://" + path, Token: fmt.Sprintf("tok-%d", time.Now().UnixNano()), Paused: paused,
		t: t, ln: ln, signal: make(chan struct{}, 1)}
	go e.accept()
	t.Cleanup(func() {
		ln.Close()
		e.mu.Lock()
		if e.conn != nil {
			e.conn.Close()
		}
		e.mu.Unlock()
		os.RemoveAll(dir)
	})
	return e
}

func (e *Editor) accept() {
	for {
		c, err := e.ln.Accept()
		if err != nil {
			return
		}
		go e.serve(c)
	}
}

func (e *Editor) serve(c net.Conn) {
	r := bufio.NewReaderSize(c, 1<<20)
	first := true
	frames := bridge.NewTransitionDecoder()
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		// A transitions frame is recorded as the queue messages it stands for.
		if qs, ok, err := frames.ExpandLine(line); ok {
			if err != nil {
				e.t.Errorf("bad transitions frame from the Go side: %v", err)
			}
			e.mu.Lock()
			e.all = append(e.all, qs...)
			e.mu.Unlock()
			select {
			case e.signal <- struct{}{}:
			default:
			}
			continue
		}
		var m map[string]any
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		if first {
			first = false
			if m["type"] != "hello" || m["token"] != e.Token {
				_, _ = c.Write([]byte(`{"type":"reject","reason":"bad hello"}` + "\n"))
				c.Close()
				return
			}
			e.mu.Lock()
			e.conn = c
			paused := e.Paused
			e.mu.Unlock()
			w, _ := json.Marshal(map[string]any{"type": "welcome", "protocol": bridge.ProtocolVersion, "paused": paused})
			_, _ = c.Write(append(w, '\n'))
		}
		if m["type"] == "ping" {
			continue
		}
		e.mu.Lock()
		e.all = append(e.all, m)
		e.mu.Unlock()
		select {
		case e.signal <- struct{}{}:
		default:
		}
	}
}

// Messages returns every message received so far (pings excluded).
func (e *Editor) Messages() []map[string]any {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]map[string]any{}, e.all...)
}

// WaitFor waits until some message at index ≥ from matches pred and returns it and its index; it fails the test
// after timeout.
func (e *Editor) WaitFor(from int, timeout time.Duration, pred func(map[string]any) bool) (map[string]any, int) {
	e.t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		e.mu.Lock()
		for i := from; i < len(e.all); i++ {
			if pred(e.all[i]) {
				m := e.all[i]
				e.mu.Unlock()
				return m, i
			}
		}
		e.mu.Unlock()
		select {
		case <-e.signal:
		case <-deadline.C:
			e.t.Fatalf("timed out after %s waiting for a message", timeout)
			return nil, -1
		}
	}
}

// Command sends a command and returns its reply (failing the test after timeout).
func (e *Editor) Command(op, controller, key string, force bool, timeout time.Duration) bridge.ReplyMsg {
	e.t.Helper()
	e.mu.Lock()
	e.nextID++
	id := e.nextID
	conn := e.conn
	e.mu.Unlock()
	if conn == nil {
		e.t.Fatal("no connection from the Go side")
	}
	line, _ := json.Marshal(map[string]any{"type": "command", "id": id, "op": op, "controller": controller, "key": key, "force": force})
	if _, err := conn.Write(append(line, '\n')); err != nil {
		e.t.Fatal(err)
	}
	m, _ := e.WaitFor(0, timeout, func(m map[string]any) bool { return m["type"] == "reply" && m["id"] == float64(id) })
	var r bridge.ReplyMsg
	raw, _ := json.Marshal(m)
	_ = json.Unmarshal(raw, &r)
	return r
}

// Is matches messages of a type whose fields equal the given values (strings compared as given).
func Is(typ string, fields ...any) func(map[string]any) bool {
	return func(m map[string]any) bool {
		if m["type"] != typ {
			return false
		}
		for i := 0; i+1 < len(fields); i += 2 {
			if fmt.Sprint(m[fields[i].(string)]) != fmt.Sprint(fields[i+1]) {
				return false
			}
		}
		return true
	}
}
