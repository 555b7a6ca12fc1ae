package bridge

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
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
	b, err := encodeLine(r.message())
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
	return Cause{Kind: CauseInformer, Event: s, Resource: s, ObjectKey: s, ResourceVersion: s, Generation: -3,
		Initial: true, AfterMs: 1500, Failures: 7, DelayMs: 20, Action: s, Note: s, At: 1764588000123}
}

// TestFastEncoderMatchesEncodingJSON: every hot message, with every optional field absent and present and with
// tricky strings in every string field, is byte-for-byte what encoding/json writes.
func TestFastEncoderMatchesEncodingJSON(t *testing.T) {
	strs := append(append([]string{}, trickyStrings...), allControlChars())
	for _, s := range strs {
		q := &Queue{name: "ctl-" + s, prefix: queuePrefix("ctl-" + s)}
		key := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns-" + s, Name: s}}
		for tr := range transitionNames {
			sameLine(t, "bare "+transitionNames[tr], &record{kind: recQueue, q: q, key: key, tr: transition(tr), at: 1})
		}
		sameLine(t, "cluster-scoped key", &record{kind: recQueue, q: q, key: reconcile.Request{NamespacedName: types.NamespacedName{Name: s}}, tr: trAdded, at: 2})
		sameLine(t, "shutdown", &record{kind: recQueue, q: q, tr: trShutdown, noKey: true, at: 3})
		sameLine(t, "added with cause", &record{kind: recQueue, q: q, key: key, tr: trAdded, hasPrio: true, prio: -100,
			hasCause: true, cause: Cause{Kind: CauseWatch, Note: s, At: 4}, at: 5})
		sameLine(t, "backoff", &record{kind: recQueue, q: q, key: key, tr: trBackoff, hasPrio: true, prio: 0,
			dueAt: 1764588000200, delayMs: 5, failures: 3, hasCause: true, cause: fullCause(s), at: 6})
		sameLine(t, "processing with causes", &record{kind: recQueue, q: q, key: key, tr: trProcessing, hasPrio: true, prio: 1 << 40,
			causes: []Cause{fullCause(s), {Kind: CauseManual, At: 7}, {Kind: s, Initial: true, At: -8}}, at: 9})

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
		sameLine(t, "ping", &record{kind: recMsg, msg: &PingMsg{At: 15}})
	}
	// Messages without a fast path still go through encoding/json.
	sameLine(t, "reply", &record{kind: recMsg, msg: &ReplyMsg{ID: 3, OK: true, Snapshot: map[string]any{"dropped": 0}}})
	sameLine(t, "controller", &record{kind: recMsg, msg: &ControllerMsg{Name: "<c>", PriorityQueue: true}})
}

// TestWireKeys: a key on the wire is "namespace/name", or the name alone for a cluster-scoped object (the editor's
// object keys), from both encoders; reconcile.Request.String() would give "/name".
func TestWireKeys(t *testing.T) {
	q := &Queue{name: "c", prefix: queuePrefix("c")}
	for _, c := range []struct {
		key  reconcile.Request
		want string
	}{
		{reconcile.Request{NamespacedName: types.NamespacedName{Name: "cluster-wide"}}, `"key":"cluster-wide"`},
		{reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "a"}}, `"key":"ns/a"`},
	} {
		r := &record{kind: recQueue, q: q, key: c.key, tr: trAdded, at: 1}
		for name, line := range map[string][]byte{"fast": fastLine(t, r), "encoding/json": jsonLine(t, r)} {
			if !bytes.Contains(line, []byte(c.want)) {
				t.Errorf("%s encoder: %s does not hold %s", name, line, c.want)
			}
		}
		if got := requestKey(c.key); `"key":"`+got+`"` != c.want {
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

// TestTrickyKeysGolden writes queue lines with tricky keys to testdata/tricky-keys.ndjson (with -update) and
// checks the file is current. The TypeScript side decodes that file with its line framing and protocol checks
// (test/unit/bridge/protocol.test.ts): the keys must come out as the strings the Go side meant (invalid UTF-8 as
// U+FFFD, one per invalid byte, as encoding/json writes them). Each line's cause note is the hex of the UTF-8
// bytes of the key the editor must see, so the TS test checks the decoded key against an independent form.
func TestTrickyKeysGolden(t *testing.T) {
	q := &Queue{name: "tricky", prefix: queuePrefix("tricky")}
	var buf []byte
	for i, s := range append(append([]string{}, trickyStrings...), allControlChars()) {
		key := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: s}}
		r := &record{kind: recQueue, q: q, key: key, tr: trAdded, hasPrio: true, hasCause: true,
			cause: Cause{Kind: CauseManual, Note: hex.EncodeToString([]byte(decoded(t, key.String()))), At: int64(i)}, at: int64(i)}
		buf = append(buf, fastLine(t, r)...)
		if !utf8.Valid(fastLine(t, r)) {
			t.Errorf("line %d is not valid UTF-8", i)
		}
	}
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
