package bridge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
)

// TransitionDecoder expands the Go side's "transitions" frames into the "queue" messages they stand for, in
// order (protocol.json messages.transitions). It is for editors written in Go (test editors, tools); the
// extension has its own (src/core/bridge/protocol.ts). Use one decoder per connection: key ids are defined per
// connection.
type TransitionDecoder struct {
	keys map[int64]string
}

// NewTransitionDecoder returns a decoder with no key defined.
func NewTransitionDecoder() *TransitionDecoder { return &TransitionDecoder{keys: map[int64]string{}} }

// Expand returns the queue messages of one frame. A malformed item is an error naming it; the items before it
// are returned with it.
func (d *TransitionDecoder) Expand(m *TransitionsMsg) ([]QueueMsg, error) {
	if m.KeysReset {
		clear(d.keys)
	}
	for i, k := range m.Keys {
		pair, ok := k.([]any)
		if !ok || len(pair) != 2 {
			return nil, fmt.Errorf("transitions.keys[%d]: want [id, key]", i)
		}
		id, okID := wholeNumber(pair[0])
		key, okKey := pair[1].(string)
		if !okID || id < 1 || !okKey {
			return nil, fmt.Errorf("transitions.keys[%d]: want [id ≥ 1, key string]", i)
		}
		d.keys[id] = key
	}
	out := make([]QueueMsg, 0, len(m.Items))
	for i, it := range m.Items {
		q, err := d.item(m, it)
		if err != nil {
			return out, fmt.Errorf("transitions.items[%d]: %w", i, err)
		}
		out = append(out, q)
	}
	return out, nil
}

func (d *TransitionDecoder) item(m *TransitionsMsg, it any) (QueueMsg, error) {
	a, ok := it.([]any)
	if !ok || len(a) < 3 || len(a) > 5 {
		return QueueMsg{}, fmt.Errorf("want [transition, keyId, dt, priority?, extra?]")
	}
	code, ok1 := wholeNumber(a[0])
	id, ok2 := wholeNumber(a[1])
	dt, ok3 := wholeNumber(a[2])
	if !ok1 || !ok2 || !ok3 || code < 0 || code >= int64(len(TransitionNames)) {
		return QueueMsg{}, fmt.Errorf("transition, keyId and dt must be integers, transition < %d", len(TransitionNames))
	}
	q := QueueMsg{Controller: m.Controller, Transition: TransitionNames[code], At: m.T0 + dt}
	if id != 0 {
		key, ok := d.keys[id]
		if !ok {
			return QueueMsg{}, fmt.Errorf("key id %d was never defined on this connection", id)
		}
		q.Key = key
	}
	if len(a) >= 4 && a[3] != nil {
		p, ok := wholeNumber(a[3])
		if !ok {
			return QueueMsg{}, fmt.Errorf("priority must be an integer or null")
		}
		q.Priority = intPtr(int(p))
	}
	if len(a) == 5 {
		raw, err := json.Marshal(a[4])
		if err != nil {
			return QueueMsg{}, err
		}
		var x QueueExtra
		dec := json.NewDecoder(bytes.NewReader(raw))
		if err := dec.Decode(&x); err != nil {
			return QueueMsg{}, fmt.Errorf("extra: %w", err)
		}
		q.DueAt, q.DelayMs, q.Failures, q.Causes = x.DueAt, x.DelayMs, x.Failures, x.Causes
		if x.PlainCause && x.Causes == nil {
			q.Causes = []Cause{plainCause(q.At)}
		}
	}
	return q, nil
}

// ExpandLine decodes one protocol line: for a transitions frame it returns its queue messages as JSON objects
// (what a "queue" line decodes to) and true; for any other line nil and false.
func (d *TransitionDecoder) ExpandLine(line []byte) ([]map[string]any, bool, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(line, &head); err != nil || head.Type != "transitions" {
		return nil, false, nil
	}
	var m TransitionsMsg
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, true, err
	}
	qs, err := d.Expand(&m)
	out := make([]map[string]any, 0, len(qs))
	for i := range qs {
		l, err := encodeLine(&qs[i])
		if err != nil {
			return out, true, err
		}
		var o map[string]any
		if err := json.Unmarshal(l, &o); err != nil {
			return out, true, err
		}
		out = append(out, o)
	}
	return out, true, err
}

// wholeNumber is v as an int64 when it is a JSON number without a fraction.
func wholeNumber(v any) (int64, bool) {
	f, ok := v.(float64)
	if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}
