package bridge

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"time"
)

// The connection to the editor: dial RECONCILE_LAB_BRIDGE, hello (with the token) → welcome, then NDJSON both
// ways: the hub's messages and a ping every second out, commands in. A broken connection is redialled with
// backoff (100 ms doubling to 5 s) and, after a new welcome, every controller is announced again. Nothing here
// ever blocks the controller: the hub's buffers are bounded and a full buffer drops (and counts) messages.

const (
	pingEvery        = time.Second
	handshakeTimeout = 10 * time.Second
	writeTimeout     = 10 * time.Second
	maxLine          = 16 << 20
)

// encodeLine marshals one message as a protocol line: its fields plus "type", then '\n'.
func encodeLine(m any) ([]byte, error) {
	name := messageName(m)
	if name == "" {
		return nil, fmt.Errorf("bridge: %T is not a protocol message", m)
	}
	body, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Grow(len(body) + len(name) + 12)
	b.WriteString(`{"type":"`)
	b.WriteString(name)
	b.WriteByte('"')
	if len(body) > 2 {
		b.WriteByte(',')
		b.Write(body[1:])
	} else {
		b.WriteByte('}')
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// dialAddress dials unix:///abs/path or tcp://127.0.0.1:PORT (loopback only: the token must not leave the host).
func dialAddress(ctx context.Context, address string) (net.Conn, error) {
	u, err := url.Parse(address)
	if err != nil {
		return nil, fmt.Errorf("bridge: %s=%q is not an address: %w", EnvAddress, address, err)
	}
	var d net.Dialer
	d.Timeout = 5 * time.Second
	switch u.Scheme {
	case "unix":
		return d.DialContext(ctx, "unix", u.Path)
	case "tcp":
		host := u.Hostname()
		if ip := net.ParseIP(host); (ip == nil && host != "localhost") || (ip != nil && !ip.IsLoopback()) {
			return nil, fmt.Errorf("bridge: %s=%q: only loopback addresses are allowed", EnvAddress, address)
		}
		return d.DialContext(ctx, "tcp", u.Host)
	}
	return nil, fmt.Errorf("bridge: %s=%q: want unix:///path or tcp://127.0.0.1:PORT", EnvAddress, address)
}

// run keeps a connection to the editor until ctx ends.
func (h *hub) run(ctx context.Context) {
	defer close(h.stopped)
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		conn, err := dialAddress(ctx, h.address)
		if err == nil {
			var welcomed bool
			welcomed, err = h.serve(ctx, conn)
			if welcomed {
				backoff = 100 * time.Millisecond
			}
		}
		if err != nil && ctx.Err() == nil {
			h.logf("bridge: connection to the editor: %v (retrying in %s)", err, backoff)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// serve runs one connection: handshake, announcements, then the write loop (commands are read on a second
// goroutine). It returns when the connection breaks or ctx ends; welcomed tells whether the handshake passed.
func (h *hub) serve(ctx context.Context, conn net.Conn) (welcomed bool, err error) {
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()

	w := bufio.NewWriter(conn)
	// The write deadline is armed once per burst (before its first line), not per line: a burst is flushed as
	// one write, and arming costs a clock read and a poller timer update per call.
	deadline := func() { _ = conn.SetWriteDeadline(time.Now().Add(writeTimeout)) }
	write := func(m any) error {
		line, err := encodeLine(m)
		if err != nil {
			return err
		}
		_, err = w.Write(line)
		return err
	}
	deadline()
	if err := write(h.hello()); err != nil {
		return false, err
	}
	if err := w.Flush(); err != nil {
		return false, err
	}
	r := bufio.NewReaderSize(conn, 64<<10)
	_ = conn.SetReadDeadline(time.Now().Add(handshakeTimeout))
	line, err := readLine(r)
	if err != nil {
		return false, fmt.Errorf("no welcome: %w", err)
	}
	_ = conn.SetReadDeadline(time.Time{})
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return false, fmt.Errorf("bad welcome line: %w", err)
	}
	switch head.Type {
	case "reject":
		var rej RejectMsg
		_ = json.Unmarshal(line, &rej)
		return false, fmt.Errorf("the editor rejected this process: %s", rej.Reason)
	case "welcome":
	default:
		return false, fmt.Errorf("expected welcome, got %q", head.Type)
	}
	var wel WelcomeMsg
	if err := json.Unmarshal(line, &wel); err != nil {
		return false, fmt.Errorf("bad welcome: %w", err)
	}
	if wel.Protocol != ProtocolVersion {
		return false, fmt.Errorf("the editor speaks protocol %d, this bridge %d", wel.Protocol, ProtocolVersion)
	}
	h.welcome(wel)
	deadline()
	for _, c := range h.announcements() {
		if err := write(c); err != nil {
			return true, err
		}
	}
	if err := w.Flush(); err != nil {
		return true, err
	}

	readErr := make(chan error, 1)
	go func() {
		for {
			line, err := readLine(r)
			if err != nil {
				readErr <- err
				return
			}
			h.handleLine(line)
		}
	}()
	return true, h.writeLoop(ctx, conn, readErr)
}

// Batching of the writer: after a burst of fewer than burstTarget records it waits flushDelay before taking the
// next one (so a busy controller's transitions go out in few large writes instead of one write per
// transition); a larger burst is followed at once by the next. With nothing waiting it sleeps until a push
// wakes it. The delay bounds how late the editor sees a transition.
const (
	burstTarget = 512
	flushDelay  = time.Millisecond
	// keepBuf is the largest encoding buffer kept between bursts.
	keepBuf = 8 << 20
)

// writeLoop sends the outbox to conn until ctx ends, the reader fails or a write fails: every waiting record is
// encoded (encode.go) into one buffer and written with one call, plus a ping every pingEvery.
func (h *hub) writeLoop(ctx context.Context, conn net.Conn, readErr <-chan error) error {
	ping := time.NewTicker(pingEvery)
	defer ping.Stop()
	delay := time.NewTimer(time.Hour)
	delay.Stop()
	defer delay.Stop()
	batch := burst{make([]record, 0, initialRecords), make([]Cause, 0, initialRecords)}
	buf := make([]byte, 0, 256<<10)
	// Queue transitions go out as frames with keys interned for this connection.
	frames := newFrameEncoder(h)
	// While this loop runs without sleeping on the outbox, it keeps the stamp clock fresh (one clock read per
	// burst) and the hot transitions read the stamp instead of the clock.
	defer h.stamps.live.Store(false)
	h.writer.Store(writerRunning)
	defer h.writer.Store(writerNone)
	// graced: the previous take found nothing and the writer stayed live one flushDelay more.
	graced := false
	for {
		h.stamps.refresh()
		h.stamps.live.Store(true)
		batch = h.box.take(batch)
		buf = buf[:0]
		select {
		case <-ping.C:
			pm := PingMsg{At: ms(h.clock.Now())}
			buf, _ = appendRecord(buf, &record{kind: recMsg, msg: &pm})
		default:
		}
		if len(batch.recs) == 0 && len(buf) == 0 {
			if !graced {
				// Nothing waits (often right after a large burst of a busy controller): stay live for one
				// flushDelay more before sleeping, so the controller keeps reading stamps, not the clock.
				graced = true
				if end, err := wait(ctx, readErr, delay); end {
					return err
				}
				continue
			}
			graced = false
			h.stamps.live.Store(false)
			select {
			case <-ctx.Done():
				return nil
			case err := <-readErr:
				return err
			case <-ping.C:
				pm := PingMsg{At: ms(h.clock.Now())}
				buf, _ = appendRecord(buf, &record{kind: recMsg, msg: &pm})
			case <-h.box.wake:
				continue
			}
		}
		graced = false
		for i := 0; i < len(batch.recs); {
			if batch.recs[i].kind == recQueue {
				var n int
				buf, n = frames.appendFrame(buf, batch.recs[i:], batch.causes)
				i += n
				continue
			}
			n := len(buf)
			var err error
			if buf, err = appendRecord(buf, &batch.recs[i]); err != nil {
				buf = buf[:n]
				h.logf("bridge: a message could not be encoded and was dropped: %v", err)
				h.box.dropped.Add(1)
			}
			i++
		}
		n := len(batch.recs)
		// Drop the references (strings, messages) the records and causes held.
		clear(batch.recs)
		clear(batch.causes)
		_ = conn.SetWriteDeadline(time.Now().Add(writeTimeout))
		h.writer.Store(writerWriting)
		_, err := conn.Write(buf)
		h.writer.Store(writerRunning)
		if err != nil {
			return err
		}
		h.stamps.refresh()
		if cap(buf) > keepBuf {
			buf = make([]byte, 0, 256<<10)
		}
		if n >= burstTarget {
			continue
		}
		if end, err := wait(ctx, readErr, delay); end {
			return err
		}
	}
}

// wait sleeps flushDelay on the writer's reused timer. It reports end = true when the writer must stop instead:
// ctx ended (err nil) or the connection's reader failed (its error).
func wait(ctx context.Context, readErr <-chan error, delay *time.Timer) (end bool, err error) {
	delay.Reset(flushDelay)
	select {
	case <-ctx.Done():
		return true, nil
	case err := <-readErr:
		return true, err
	case <-delay.C:
		return false, nil
	}
}

func readLine(r *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		part, isPrefix, err := r.ReadLine()
		if err != nil {
			return nil, err
		}
		buf = append(buf, part...)
		if len(buf) > maxLine {
			return nil, errors.New("line too long")
		}
		if !isPrefix {
			return buf, nil
		}
	}
}

// handleLine decodes one editor line; commands are executed, anything else is ignored.
func (h *hub) handleLine(line []byte) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(line, &head); err != nil || head.Type != "command" {
		return
	}
	var c CommandMsg
	if err := json.Unmarshal(line, &c); err != nil {
		h.reply(ReplyMsg{ID: c.ID, Error: "bad command: " + err.Error()})
		return
	}
	h.handle(c)
}

func (h *hub) hello() *HelloMsg {
	return &HelloMsg{
		Protocol:          ProtocolVersion,
		Token:             h.token,
		PID:               os.Getpid(),
		Program:           filepath.Base(os.Args[0]),
		GoVersion:         runtime.Version(),
		ControllerRuntime: controllerRuntimeVersion(),
		Instance:          h.instance,
	}
}

// controllerRuntimeVersion is the controller-runtime module version this program was built with.
func controllerRuntimeVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "sigs.k8s.io/controller-runtime" {
				if d.Replace != nil {
					return d.Replace.Version
				}
				return d.Version
			}
		}
	}
	return "unknown"
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
