package bridge

import (
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// The hand-written encoder of the hot messages (queue transition frames, reconcile start/end, writes, ping). It appends to a
// caller-owned buffer and allocates nothing. Its output is byte-for-byte what encodeLine (encoding/json plus the
// "type" envelope) writes for the same message: the same field order, the same omitempty rules, and strings
// escaped the way encoding/json escapes them (", \, control characters, <, > and & as \u00XX or their short
// forms, U+2028/U+2029, invalid UTF-8 as \ufffd). TestFastEncoderMatchesEncodingJSON and FuzzAppendString hold it
// to that; any other message goes through encodeLine.

// appendRecord appends one protocol line (with its '\n') for a recMsg record (queue records go out in frames,
// see frameEncoder).
func appendRecord(b []byte, r *record) ([]byte, error) {
	switch m := r.msg.(type) {
	case *ReconcileStartMsg:
		return appendReconcileStart(b, m), nil
	case *ReconcileEndMsg:
		b = append(b, `{"type":"reconcileEnd",`...)
		return append(appendReconcileEndFields(b, m), '}', '\n'), nil
	case *WriteMsg:
		return appendWrite(b, m)
	case *PingMsg:
		b = append(b, `{"type":"ping","at":`...)
		b = strconv.AppendInt(b, m.At, 10)
		return append(b, '}', '\n'), nil
	}
	line, err := encodeLine(r.msg)
	if err != nil {
		return b, err
	}
	return append(b, line...), nil
}

// framePrefix is the start of every transitions frame of a controller: {"type":"transitions","controller":"<name>",
// computed once per queue.
func framePrefix(controller string) []byte {
	b := append([]byte(nil), `{"type":"transitions","controller":`...)
	return appendString(b, controller)
}

// Frames: at most maxFrameItems items per frame (a frame stays far below the editor's line limit), and at most
// about maxKeyIDs interned keys per connection (then the table starts over with keysReset).
const (
	maxFrameItems = 4096
	maxKeyIDs     = 1 << 16
)

// keyIDMask is the id part of hub.keyIDs and keyState.wire (the generation is the upper 32 bits).
const keyIDMask = 1<<32 - 1

// frameEncoder is the writer's per-connection state of the transitions frames (protocol.json
// messages.transitions): the ids of the keys defined on this connection. A new connection gets a new encoder, so
// ids start again at 1, as the editor's table does.
//
// Key ids: with a hub, the encoder starts a generation of hub.keyIDs (and another one at each keysReset); a
// record whose wire id is of the encoder's generation uses that id (the queue kept it with the key's state), and
// defined, a bitset indexed by id, tells whether the key's text was sent already, with no hash of the key. A
// record without one (no key state at hand, an older generation, ids ran out) gets its id from ids, a map by
// key, the ids then taken from the same counter, so the two never collide. Without a hub (tests) every id comes
// from ids, numbered 1, 2, 3…
type frameEncoder struct {
	h       *hub
	gen     uint64
	defined []uint64
	ids     map[reconcile.Request]int64
	next    int64
	// scratch holds the key ids of the run being encoded; last/lastID cache the previous map-found key.
	scratch []int64
	last    reconcile.Request
	lastID  int64
	// note/noteJSON: the last cause note encoded and its escaped form (most causes of a controller share a
	// handful of constant notes, and escaping is a byte-by-byte scan).
	note     string
	noteJSON []byte
}

func newFrameEncoder(h *hub) *frameEncoder {
	f := &frameEncoder{h: h, ids: map[reconcile.Request]int64{}, next: 1}
	f.newGeneration()
	return f
}

// newGeneration starts a new generation of key ids (hub.keyIDs: the id part starts again at 0).
func (f *frameEncoder) newGeneration() {
	if f.h == nil {
		return
	}
	for {
		old := f.h.keyIDs.Load()
		gen := old>>32 + 1
		if f.h.keyIDs.CompareAndSwap(old, gen<<32) {
			f.gen = gen
			return
		}
	}
}

// newID is a key id not given out in this generation.
func (f *frameEncoder) newID() int64 {
	if f.h == nil {
		id := f.next
		f.next++
		return id
	}
	return int64(f.h.keyIDs.Add(1) & keyIDMask)
}

// idsFull reports whether the key table reached its bound (then the frame starts with keysReset).
func (f *frameEncoder) idsFull() bool {
	if f.h == nil {
		return len(f.ids) >= maxKeyIDs
	}
	return f.h.keyIDs.Load()&keyIDMask >= maxKeyIDs
}

func (f *frameEncoder) isDefined(id int64) bool {
	i := int(id >> 6)
	return i < len(f.defined) && f.defined[i]&(1<<(id&63)) != 0
}

func (f *frameEncoder) setDefined(id int64) {
	i := int(id >> 6)
	for i >= len(f.defined) {
		f.defined = append(f.defined, 0)
	}
	f.defined[i] |= 1 << (id & 63)
}

// appendFrame appends one transitions frame (with its '\n') holding the longest run at the start of recs of
// consecutive recQueue records of one queue (at most maxFrameItems), and returns how many records it holds;
// causes are the burst's causes (record.cause).
// recs[0] must be a recQueue record. Its output is byte-for-byte encodeLine of the TransitionsMsg the run
// stands for (TestFrameEncoderMatchesEncodingJSON).
func (f *frameEncoder) appendFrame(b []byte, recs []record, causes []Cause) ([]byte, int) {
	q := recs[0].q
	n := 1
	for n < len(recs) && n < maxFrameItems && recs[n].kind == recQueue && recs[n].q == q {
		n++
	}
	run := recs[:n]
	b = append(b, q.framePrefix...)
	if f.idsFull() {
		clear(f.ids)
		clear(f.defined)
		f.next, f.lastID = 1, 0
		f.newGeneration()
		b = append(b, `,"keysReset":true`...)
	}
	f.scratch = f.scratch[:0]
	defined := false
	for i := range run {
		r := &run[i]
		var id int64
		define := false
		switch {
		case r.noKey:
		case r.wire != 0 && r.wire>>32 == f.gen && f.h != nil:
			id = int64(r.wire & keyIDMask)
			define = !f.isDefined(id)
		case f.lastID != 0 && r.key == f.last:
			id = f.lastID
		default:
			id = f.ids[r.key]
			if id == 0 {
				id = f.newID()
				f.ids[r.key] = id
				define = true
			}
			f.last, f.lastID = r.key, id
		}
		if define {
			f.setDefined(id)
			if !defined {
				b = append(b, `,"keys":[[`...)
				defined = true
			} else {
				b = append(b, ',', '[')
			}
			b = appendID(b, id)
			b = append(b, ',')
			b = appendKey(b, r.key.Namespace, r.key.Name)
			b = append(b, ']')
		}
		f.scratch = append(f.scratch, id)
	}
	if defined {
		b = append(b, ']')
	}
	t0 := run[0].at
	b = append(b, `,"t0":`...)
	b = strconv.AppendInt(b, t0, 10)
	b = append(b, `,"items":[`...)
	for i := range run {
		r := &run[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = appendSmallInt(b, int64(r.tr))
		b = append(b, ',')
		b = appendID(b, f.scratch[i])
		b = append(b, ',')
		b = appendSmallInt(b, r.at-t0)
		extra := r.dueAt != 0 || r.delayMs != 0 || r.failures != 0 || r.cause > 0 || r.plain
		if r.hasPrio {
			b = append(b, ',')
			b = appendSmallInt(b, int64(r.prio))
		} else if extra {
			b = append(b, ",null"...)
		}
		if extra {
			b = append(b, ',', '{')
			sep := false
			field := func(name string) {
				if sep {
					b = append(b, ',')
				}
				sep = true
				b = append(b, name...)
			}
			if r.dueAt != 0 {
				field(`"dueAt":`)
				b = strconv.AppendInt(b, r.dueAt, 10)
			}
			if r.delayMs != 0 {
				field(`"delayMs":`)
				b = strconv.AppendInt(b, r.delayMs, 10)
			}
			if r.failures != 0 {
				field(`"failures":`)
				b = strconv.AppendInt(b, int64(r.failures), 10)
			}
			if r.cause > 0 {
				field(`"causes":[`)
				b = f.appendCause(b, &causes[r.cause-1])
				b = append(b, ']')
			} else if r.plain {
				field(`"plainCause":true`)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, ']', '}', '\n'), n
}

// appendKey appends requestKey's form ("namespace/name", name alone when cluster-scoped) as a JSON string
// without building it.
func appendKey(b []byte, namespace, name string) []byte {
	b = append(b, '"')
	if namespace != "" {
		b = appendStringBody(b, namespace)
		b = append(b, '/')
	}
	b = appendStringBody(b, name)
	return append(b, '"')
}

// appendCauses appends a []Cause as encoding/json does (null when nil).
func appendCauses(b []byte, cs []Cause) []byte {
	if cs == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range cs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendCause(b, &cs[i])
	}
	return append(b, ']')
}

// appendCause is appendCause with the note's escaped form reused when it is the previous cause's note.
func (f *frameEncoder) appendCause(b []byte, c *Cause) []byte {
	if c.Note == "" {
		return appendCause(b, c)
	}
	if c.Note != f.note || f.noteJSON == nil {
		f.note = c.Note
		f.noteJSON = appendString(f.noteJSON[:0], c.Note)
	}
	b = appendCauseHead(b, c)
	b = append(b, `,"note":`...)
	b = append(b, f.noteJSON...)
	return appendCauseTail(b, c)
}

func appendCause(b []byte, c *Cause) []byte {
	b = appendCauseHead(b, c)
	b = appendOptString(b, `,"note":`, c.Note)
	return appendCauseTail(b, c)
}

// appendCauseHead appends a cause's fields before "note"; appendCauseTail those after it and the brace.
func appendCauseHead(b []byte, c *Cause) []byte {
	b = append(b, `{"kind":`...)
	b = appendString(b, c.Kind)
	b = appendOptString(b, `,"event":`, c.Event)
	b = appendOptString(b, `,"resource":`, c.Resource)
	b = appendOptString(b, `,"objectKey":`, c.ObjectKey)
	b = appendOptString(b, `,"objectKind":`, c.ObjectKind)
	b = appendOptString(b, `,"resourceVersion":`, c.ResourceVersion)
	b = appendOptInt(b, `,"generation":`, c.Generation)
	if c.DeletionRequested {
		b = append(b, `,"deletionRequested":true`...)
	}
	if c.Initial {
		b = append(b, `,"initial":true`...)
	}
	b = appendOptInt(b, `,"afterMs":`, c.AfterMs)
	b = appendOptInt(b, `,"failures":`, int64(c.Failures))
	b = appendOptInt(b, `,"delayMs":`, c.DelayMs)
	return appendOptString(b, `,"action":`, c.Action)
}

func appendCauseTail(b []byte, c *Cause) []byte {
	b = append(b, `,"at":`...)
	b = strconv.AppendInt(b, c.At, 10)
	return append(b, '}')
}

func appendReconcileStart(b []byte, m *ReconcileStartMsg) []byte {
	b = append(b, `{"type":"reconcileStart","controller":`...)
	b = appendString(b, m.Controller)
	b = append(b, `,"key":`...)
	b = appendString(b, m.Key)
	b = append(b, `,"reconcileID":`...)
	b = appendString(b, m.ReconcileID)
	b = append(b, `,"triggers":`...)
	b = appendCauses(b, m.Triggers)
	b = appendBool(b, `,"dryRun":`, m.DryRun)
	b = append(b, `,"at":`...)
	b = strconv.AppendInt(b, m.At, 10)
	return append(b, '}', '\n')
}

// appendReconcileEndFields appends the fields of a reconcileEnd (without braces; the first has no comma).
func appendReconcileEndFields(b []byte, m *ReconcileEndMsg) []byte {
	b = append(b, `"controller":`...)
	b = appendString(b, m.Controller)
	b = append(b, `,"key":`...)
	b = appendString(b, m.Key)
	b = append(b, `,"reconcileID":`...)
	b = appendString(b, m.ReconcileID)
	b = append(b, `,"durationMs":`...)
	b = strconv.AppendInt(b, m.DurationMs, 10)
	if r := m.Result; r != nil {
		b = append(b, `,"result":{`...)
		sep := ""
		if r.RequeueAfterMs != 0 {
			b = append(b, `"requeueAfterMs":`...)
			b = strconv.AppendInt(b, r.RequeueAfterMs, 10)
			sep = ","
		}
		if r.Requeue {
			b = append(b, sep...)
			b = append(b, `"requeue":true`...)
			sep = ","
		}
		if r.Priority != nil {
			b = append(b, sep...)
			b = append(b, `"priority":`...)
			b = strconv.AppendInt(b, int64(*r.Priority), 10)
		}
		b = append(b, '}')
	}
	b = appendOptString(b, `,"error":`, m.Error)
	if m.Terminal {
		b = append(b, `,"terminal":true`...)
	}
	b = appendOptString(b, `,"panic":`, m.Panic)
	b = appendBool(b, `,"dryRun":`, m.DryRun)
	b = append(b, `,"at":`...)
	return strconv.AppendInt(b, m.At, 10)
}

func appendOptString(b []byte, name, s string) []byte {
	if s == "" {
		return b
	}
	b = append(b, name...)
	return appendString(b, s)
}

func appendOptInt(b []byte, name string, i int64) []byte {
	if i == 0 {
		return b
	}
	b = append(b, name...)
	return strconv.AppendInt(b, i, 10)
}

func appendBool(b []byte, name string, v bool) []byte {
	b = append(b, name...)
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

// appendString appends s as a JSON string, escaped as encoding/json escapes it.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	b = appendStringBody(b, s)
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// plainASCII marks the ASCII bytes encoding/json copies unescaped: printable ASCII (and DEL) except '"', '\\'
// and the HTML-sensitive '<', '>', '&'.
var plainASCII = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = true
	}
	for _, c := range `"\<>&` {
		t[c] = false
	}
	return t
}()

// appendStringBody appends s escaped, without quotes.
func appendStringBody(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plainASCII[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default: // other control characters and < > &
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(b, s[start:]...)
}

// appendWrite appends a "write" line; the objects of a dry run (before/after) go through encoding/json.
func appendWrite(b []byte, m *WriteMsg) ([]byte, error) {
	b = append(b, `{"type":"write"`...)
	b = appendOptString(b, `,"controller":`, m.Controller)
	b = appendOptString(b, `,"key":`, m.Key)
	b = appendOptString(b, `,"reconcileID":`, m.ReconcileID)
	w := &m.Write
	b = append(b, `,"write":{"verb":`...)
	b = appendString(b, w.Verb)
	b = append(b, `,"group":`...)
	b = appendString(b, w.Group)
	b = append(b, `,"version":`...)
	b = appendString(b, w.Version)
	b = append(b, `,"resource":`...)
	b = appendString(b, w.Resource)
	b = appendOptString(b, `,"kind":`, w.Kind)
	b = appendOptString(b, `,"namespace":`, w.Namespace)
	b = append(b, `,"name":`...)
	b = appendString(b, w.Name)
	b = appendOptString(b, `,"subresource":`, w.Subresource)
	b = appendOptString(b, `,"resourceVersionBefore":`, w.ResourceVersionBefore)
	b = appendOptString(b, `,"resourceVersionAfter":`, w.ResourceVersionAfter)
	b = appendBool(b, `,"dryRun":`, w.DryRun)
	b = appendOptString(b, `,"error":`, w.Error)
	for _, o := range [...]struct {
		name string
		obj  map[string]any
	}{{`,"before":`, w.Before}, {`,"after":`, w.After}} {
		if len(o.obj) == 0 {
			continue
		}
		raw, err := json.Marshal(o.obj)
		if err != nil {
			return b, err
		}
		b = append(b, o.name...)
		b = append(b, raw...)
	}
	b = appendOptString(b, `,"patch":`, w.Patch)
	b = appendOptString(b, `,"patchType":`, w.PatchType)
	b = appendOptString(b, `,"selector":`, w.Selector)
	if len(w.Warnings) > 0 {
		b = append(b, `,"warnings":[`...)
		for i, t := range w.Warnings {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, t)
		}
		b = append(b, ']')
	}
	if w.Deleted {
		b = append(b, `,"deleted":true`...)
	}
	b = append(b, `},"at":`...)
	b = strconv.AppendInt(b, m.At, 10)
	return append(b, '}', '\n'), nil
}

// appendSmallInt is strconv.AppendInt(b, v, 10) with the one-digit case inline: a transition's kind, its time after
// the frame's first (a burst lasts about a millisecond) and its priority (usually 0) are single digits, and the
// call into strconv was a measurable part of the writer's encoding.
func appendSmallInt(b []byte, v int64) []byte {
	if uint64(v) < 10 {
		return append(b, byte('0'+v))
	}
	return strconv.AppendInt(b, v, 10)
}

// appendID is strconv.AppendInt(b, v, 10) for a frame's key ids (small positive numbers, usually several
// digits): formatted in place, two digits per step, without strconv's general path (which cost the writer
// about 20 ns an item, a third of a frame's encoding). Any other value goes through strconv.
func appendID(b []byte, v int64) []byte {
	if v < 0 || v >= 1e8 {
		return strconv.AppendInt(b, v, 10)
	}
	if v < 10 {
		return append(b, byte('0'+v))
	}
	n := 1
	for x := v; x >= 10; x /= 10 {
		n++
	}
	b = slices.Grow(b, n)
	b = b[:len(b)+n]
	i := len(b)
	u := uint32(v)
	for u >= 100 {
		d := (u % 100) * 2
		u /= 100
		i -= 2
		b[i], b[i+1] = digitPairs[d], digitPairs[d+1]
	}
	if u >= 10 {
		i -= 2
		b[i], b[i+1] = digitPairs[u*2], digitPairs[u*2+1]
	} else {
		i--
		b[i] = byte('0' + u)
	}
	return b
}

// digitPairs holds "00" to "99" (appendID).
const digitPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"
