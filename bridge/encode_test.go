package bridge

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"flag"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// trickyStrings are user data the encoder must escape exactly as encoding/json does: quotes, backslashes,
// every control character, HTML-sensitive characters, non-ASCII (2-, 3- and 4-byte UTF-8), the JavaScript line
// separators, DEL, and invalid UTF-8 (a lone continuation byte, a truncated sequence, an overlong encoding, a
// surrogate half).
var trickyStrings = []string{
	"",
	"plain-name.0",
	`quote"inside`,
	`back\slash`,
	"tab\tnewline\ncr\rbackspace\bformfeed\f",
	"nul\x00unit\x1fesc\x1b",
	"<script>&amp;</script>",
	"ünïcödé-日本語-🙂",
	"line\u2028para\u2029end",
	"del\x7f",
	"lone\x80continuation",
	"truncated\xe6\x97",
	"overlong\xc0\xaf",
	"surrogate\xed\xa0\x80half",
	"\xff",
	"ends-with-backslash\\",
}

func allControlChars() string {
	var b strings.Builder
	for c := 0; c < 0x20; c++ {
		b.WriteByte(byte(c))
	}
	return b.String()
}

// fastLine encodes a record with the hand-written encoder.
func fastLine(t testing.TB, r *record) []byte {
	t.Helper()
	b, err := appendRecord(nil, r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// jsonLine encodes the message a record stands for with encoding/json (encodeLine).
func jsonLine(t testing.TB, r *record) []byte {
	t.Helper()
	b, err := encodeLine(r.message(nil))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sameLine(t *testing.T, what string, r *record) {
	t.Helper()
	fast, want := fastLine(t, r), jsonLine(t, r)
	if !bytes.Equal(fast, want) {
		t.Errorf("%s:\nfast encoder  %s\nencoding/json %s", what, fast, want)
	}
}

func fullCause(s string) Cause {
	return Cause{Kind: CauseInformer, Event: s, Resource: s, ObjectKey: s, ObjectKind: s, ResourceVersion: s, Generation: -3, DeletionRequested: true,
		Initial: true, AfterMs: 1500, Failures: 7, DelayMs: 20, Action: s, Note: s, At: 1764588000123}
}

// TestFastEncoderMatchesEncodingJSON: every hot message line, with every optional field absent and present and
// with tricky strings in every string field, is byte-for-byte what encoding/json writes.
func TestFastEncoderMatchesEncodingJSON(t *testing.T) {
	strs := append(append([]string{}, trickyStrings...), allControlChars())
	for _, s := range strs {
		id := "rid-" + s
		for _, triggers := range [][]Cause{nil, {}, {fullCause(s)}} {
			sameLine(t, "reconcileStart", &record{kind: recMsg, msg: &ReconcileStartMsg{Controller: s, Key: s, ReconcileID: id, Triggers: triggers, DryRun: s == "", At: 10}})
		}
		p := -5
		for _, res := range []*Result{nil, {}, {RequeueAfterMs: 250}, {Requeue: true}, {Priority: &p}, {RequeueAfterMs: 1, Requeue: true, Priority: &p}} {
			sameLine(t, "reconcileEnd", &record{kind: recMsg, msg: &ReconcileEndMsg{Controller: s, Key: s, ReconcileID: id, DurationMs: 12, Result: res, At: 11}})
		}
		sameLine(t, "reconcileEnd error", &record{kind: recMsg, msg: &ReconcileEndMsg{Controller: s, Key: s, ReconcileID: id, Error: "boom: " + s, Terminal: true, Panic: s, DryRun: true, At: 12}})
		sameLine(t, "write", &record{kind: recMsg, msg: &WriteMsg{Controller: s, Key: s, ReconcileID: id, At: 13,
			Write: Write{Verb: "update", Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespace: s, Name: s,
				ResourceVersionBefore: "1", ResourceVersionAfter: "2", Error: s, Patch: s, PatchType: s}}})
		sameLine(t, "write outside a reconcile, dry run with objects", &record{kind: recMsg, msg: &WriteMsg{At: 14,
			Write: Write{Verb: "create", Group: "apps", Version: "v1", Resource: "deployments", Name: s, DryRun: true,
				Before: map[string]any{}, After: map[string]any{"metadata": map[string]any{"name": s, "labels": map[string]any{"<b>": s}}, "n": 1.5}}}})
		sameLine(t, "deleteAllOf with a selector", &record{kind: recMsg, msg: &WriteMsg{At: 16,
			Write: Write{Verb: "deleteAllOf", Version: "v1", Resource: "configmaps", Namespace: s, Selector: s}}})
		sameLine(t, "update that removed the last finalizer", &record{kind: recMsg, msg: &WriteMsg{At: 17,
			Write: Write{Verb: "update", Version: "v1", Resource: "configmaps", Namespace: s, Name: s, ResourceVersionBefore: "5", ResourceVersionAfter: "5", Deleted: true}}})
		sameLine(t, "write the server warned about", &record{kind: recMsg, msg: &WriteMsg{At: 18,
			Write: Write{Verb: "create", Version: "v1", Resource: "configmaps", Namespace: s, Name: s, Warnings: []string{`unknown field "x"`, s}}}})
		sameLine(t, "ping", &record{kind: recMsg, msg: &PingMsg{At: 15}})
	}
	// Messages without a fast path still go through encoding/json.
	sameLine(t, "reply", &record{kind: recMsg, msg: &ReplyMsg{ID: 3, OK: true, Snapshot: map[string]any{"dropped": 0}}})
	sameLine(t, "controller", &record{kind: recMsg, msg: &ControllerMsg{Name: "<c>", PriorityQueue: true}})
}

// refFrames is the reference of frameEncoder: the same key ids, assigned with plain Go values, and the frame
// encoded by encoding/json (encodeLine of a TransitionsMsg).
type refFrames struct {
	ids  map[reconcile.Request]int64
	next int64
}

func (f *refFrames) frame(t *testing.T, run []record, causes []Cause) []byte {
	t.Helper()
	m := TransitionsMsg{Controller: run[0].q.name, T0: run[0].at, Items: []any{}}
	if len(f.ids) >= maxKeyIDs {
		clear(f.ids)
		f.next = 1
		m.KeysReset = true
	}
	for _, r := range run {
		var id int64
		if !r.noKey {
			if id = f.ids[r.key]; id == 0 {
				id = f.next
				f.next++
				f.ids[r.key] = id
				m.Keys = append(m.Keys, []any{id, requestKey(r.key)})
			}
		}
		item := []any{int(r.tr), id, r.at - m.T0}
		var x *QueueExtra
		if r.dueAt != 0 || r.delayMs != 0 || r.failures != 0 || r.cause > 0 || r.plain {
			x = &QueueExtra{DueAt: r.dueAt, DelayMs: r.delayMs, Failures: r.failures}
			if r.cause > 0 {
				x.Causes = []Cause{causes[r.cause-1]}
			} else if r.plain {
				x.PlainCause = true
			}
		}
		switch {
		case r.hasPrio:
			item = append(item, r.prio)
		case x != nil:
			item = append(item, nil)
		}
		if x != nil {
			item = append(item, x)
		}
		m.Items = append(m.Items, item)
	}
	line, err := encodeLine(&m)
	if err != nil {
		t.Fatal(err)
	}
	return line
}

// encodeBatch encodes a batch as the writer does (frames for queue records, lines for the rest) with both
// encoders; it returns the fast output, the reference output and the number of frames.
func encodeBatch(t *testing.T, fe *frameEncoder, ref *refFrames, batch []record, causes []Cause) (fast, want []byte, frames int) {
	t.Helper()
	for i := 0; i < len(batch); {
		if batch[i].kind == recQueue {
			var n int
			fast, n = fe.appendFrame(fast, batch[i:], causes)
			want = append(want, ref.frame(t, batch[i:i+n], causes)...)
			i += n
			frames++
			continue
		}
		fast = append(fast, fastLine(t, &batch[i])...)
		want = append(want, jsonLine(t, &batch[i])...)
		i++
	}
	return fast, want, frames
}

// TestFrameEncoderMatchesEncodingJSON: transitions frames (every transition, every optional field absent and
// present, tricky controller names and keys, keys defined once per connection, runs split by another queue, by
// another message and at maxFrameItems) are byte-for-byte what encoding/json writes, and decode back
// (TransitionDecoder) to exactly the queue messages of the records, in order.
func TestFrameEncoderMatchesEncodingJSON(t *testing.T) {
	fe, ref := newFrameEncoder(nil), &refFrames{ids: map[reconcile.Request]int64{}, next: 1}
	dec := NewTransitionDecoder()
	strs := append(append([]string{}, trickyStrings...), allControlChars())
	other := &Queue{name: "other", framePrefix: framePrefix("other")}
	var all []record
	for round := range 2 { // the second round's keys are already defined
		for _, s := range strs {
			q := &Queue{name: "ctl-" + s, framePrefix: framePrefix("ctl-" + s)}
			key := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns-" + s, Name: s}}
			var batch []record
			var causes []Cause
			withCause := func(r record, c Cause) record {
				causes = append(causes, c)
				r.cause = int32(len(causes))
				return r
			}
			for tr := range transitionNames {
				batch = append(batch, record{kind: recQueue, q: q, key: key, tr: transition(tr), at: 1000})
			}
			batch = append(batch,
				record{kind: recQueue, q: q, key: reconcile.Request{NamespacedName: types.NamespacedName{Name: s}}, tr: trAdded, at: 998},
				record{kind: recQueue, q: q, tr: trShutdown, noKey: true, at: 1003},
				record{kind: recQueue, q: q, key: key, tr: trAdded, hasPrio: true, plain: true, at: 1004},
				record{kind: recQueue, q: q, key: key, tr: trAdded, plain: true, at: 1764588000201},
				withCause(record{kind: recQueue, q: q, key: key, tr: trAdded, hasPrio: true, prio: -100, at: 1005}, Cause{Kind: CauseWatch, Note: s, At: 4}),
				record{kind: recMsg, msg: &PingMsg{At: 1}},
				withCause(record{kind: recQueue, q: q, key: key, tr: trBackoff, hasPrio: true, prio: 0, dueAt: 1764588000200, delayMs: 5, failures: 3, at: 6}, fullCause(s)),
				record{kind: recQueue, q: q, key: key, tr: trWaiting, dueAt: 7, at: 7},
				record{kind: recQueue, q: other, key: key, tr: trProcessing, hasPrio: true, prio: 1 << 40, at: 9},
				record{kind: recQueue, q: q, key: key, tr: trDone, failures: 2, at: 10},
				record{kind: recQueue, q: q, key: key, tr: trReady, hasPrio: true, prio: 3, delayMs: -1, at: 11},
			)
			fast, want, _ := encodeBatch(t, fe, ref, batch, causes)
			if !bytes.Equal(fast, want) {
				t.Fatalf("round %d, %q:\nframe encoder %s\nencoding/json %s", round, s, fast, want)
			}
			all = append(all, batch...)
			checkDecodes(t, dec, fast, batch, causes)
		}
	}
	// A run longer than maxFrameItems is split.
	q := &Queue{name: "big", framePrefix: framePrefix("big")}
	var batch []record
	for i := range maxFrameItems + 10 {
		batch = append(batch, record{kind: recQueue, q: q, key: reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "n", Name: strconv.Itoa(i % 50)}}, tr: trAdded, at: int64(i)})
	}
	fast, want, frames := encodeBatch(t, fe, ref, batch, nil)
	if !bytes.Equal(fast, want) || frames != 2 {
		t.Fatalf("a run of %d records: %d frames (want 2), equal %v", len(batch), frames, bytes.Equal(fast, want))
	}
	checkDecodes(t, dec, fast, batch, nil)
}

// checkDecodes decodes out (frames and lines) and checks the frames' queue messages are the queue records'.
func checkDecodes(t *testing.T, dec *TransitionDecoder, out []byte, batch []record, causes []Cause) {
	t.Helper()
	var got []QueueMsg
	for _, line := range bytes.SplitAfter(out, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		qs, ok, err := dec.ExpandLine(line)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			continue
		}
		for _, q := range qs {
			raw, _ := json.Marshal(q)
			var m QueueMsg
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			got = append(got, m)
		}
	}
	var want []QueueMsg
	for i := range batch {
		if batch[i].kind == recQueue {
			m := batch[i].message(causes).(*QueueMsg)
			// What the editor sees of a string is its JSON decoding (invalid UTF-8 as U+FFFD).
			m.Controller, m.Key = decoded(t, m.Controller), decoded(t, m.Key)
			for j := range m.Causes {
				raw, _ := json.Marshal(m.Causes[j])
				_ = json.Unmarshal(raw, &m.Causes[j])
			}
			want = append(want, *m)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded frames differ from the records:\ngot  %+v\nwant %+v", got, want)
	}
}

// TestWireKeys: a key on the wire is "namespace/name", or the name alone for a cluster-scoped object (the editor's
// object keys); reconcile.Request.String() would give "/name".
func TestWireKeys(t *testing.T) {
	q := &Queue{name: "c", framePrefix: framePrefix("c")}
	for _, c := range []struct {
		key  reconcile.Request
		want string
	}{
		{reconcile.Request{NamespacedName: types.NamespacedName{Name: "cluster-wide"}}, `"keys":[[1,"cluster-wide"]]`},
		{reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "a"}}, `"keys":[[1,"ns/a"]]`},
	} {
		r := []record{{kind: recQueue, q: q, key: c.key, tr: trAdded, at: 1}}
		line, _ := newFrameEncoder(nil).appendFrame(nil, r, nil)
		if !bytes.Contains(line, []byte(c.want)) {
			t.Errorf("%s does not hold %s", line, c.want)
		}
		if got := requestKey(c.key); `"keys":[[1,"`+got+`"]]` != c.want {
			t.Errorf("requestKey(%v) = %q", c.key, got)
		}
		back, err := parseKey(requestKey(c.key))
		if err != nil || back != c.key {
			t.Errorf("parseKey(requestKey(%v)) = %v, %v", c.key, back, err)
		}
	}
}

// FuzzAppendString: any string, escaped by the fast encoder, is what encoding/json writes.
func FuzzAppendString(f *testing.F) {
	for _, s := range trickyStrings {
		f.Add(s)
	}
	f.Add(allControlChars())
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("%q:\nfast encoder  %s\nencoding/json %s", s, got, want)
		}
	})
}

// decoded is s as a JSON decoder sees it after encoding/json wrote it.
func decoded(t *testing.T, s string) string {
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var out string
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

var updateGolden = flag.Bool("update", false, "rewrite testdata/tricky-keys.ndjson")

// TestTrickyKeysGolden writes a transitions frame per tricky key to testdata/tricky-keys.ndjson (with -update)
// and checks the file is current. The TypeScript side decodes that file with its line framing, protocol checks
// and frame decoder (test/unit/bridge/protocol.test.ts): the keys must come out as the strings the Go side meant
// (invalid UTF-8 as U+FFFD, one per invalid byte, as encoding/json writes them). Each item's cause note is the
// hex of the UTF-8 bytes of the key the editor must see, so the TS test checks the decoded key against an
// independent form. One encoder writes the whole file (one connection): the last frames reuse the keys of the
// first ones by id.
func TestTrickyKeysGolden(t *testing.T) {
	q := &Queue{name: "tricky", framePrefix: framePrefix("tricky")}
	fe := newFrameEncoder(nil)
	var buf []byte
	strs := append(append([]string{}, trickyStrings...), allControlChars())
	for i, s := range strs {
		key := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: s}}
		r := []record{{kind: recQueue, q: q, key: key, tr: trAdded, hasPrio: true, cause: 1, at: int64(i)}}
		c := []Cause{{Kind: CauseManual, Note: hex.EncodeToString([]byte(decoded(t, key.String()))), At: int64(i)}}
		line, _ := fe.appendFrame(nil, r, c)
		if !utf8.Valid(line) {
			t.Errorf("frame %d is not valid UTF-8", i)
		}
		buf = append(buf, line...)
	}
	// The same keys again, by id only: processing then done.
	var again []record
	for i, s := range strs {
		key := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: s}}
		again = append(again, record{kind: recQueue, q: q, key: key, tr: trProcessing, hasPrio: true, at: int64(100 + i)},
			record{kind: recQueue, q: q, key: key, tr: trDone, at: int64(100 + i)})
	}
	line, _ := fe.appendFrame(nil, again, nil)
	buf = append(buf, line...)
	const path = "testdata/tricky-keys.ndjson"
	if *updateGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestTrickyKeysGolden -update)", err)
	}
	if !bytes.Equal(got, buf) {
		t.Fatalf("%s is stale (run go test -run TestTrickyKeysGolden -update)", path)
	}
}

func TestAppendSmallInt(t *testing.T) {
	for _, v := range []int64{-12, -1, 0, 1, 9, 10, 99, 100, 12345, math.MaxInt64, math.MinInt64} {
		if got, want := string(appendSmallInt([]byte("x"), v)), "x"+strconv.FormatInt(v, 10); got != want {
			t.Errorf("appendSmallInt(%d) = %q, want %q", v, got, want)
		}
	}
}

// appendID writes what strconv.AppendInt writes, for every id a frame may hold and the values it hands to
// strconv.
func TestAppendIDMatchesStrconv(t *testing.T) {
	vals := []int64{-1, 0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 1e7 - 1, 1e7, 1e8 - 1, 1e8, 1 << 40}
	for v := int64(0); v < 200_000; v++ {
		vals = append(vals, v)
	}
	for v := int64(200_000); v < 1e8; v += 997 {
		vals = append(vals, v)
	}
	for _, v := range vals {
		if got, want := string(appendID([]byte("x"), v)), string(strconv.AppendInt([]byte("x"), v, 10)); got != want {
			t.Fatalf("appendID(%d) = %q, want %q", v, got, want)
		}
	}
}
