package bridge

import (
	"encoding/json"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// TestProtocolConformance checks every Go message and type struct against protocol.json: the same messages and
// types, the same fields (JSON names), the same types and the same optionality (omitempty ⇔ trailing '?').
func TestProtocolConformance(t *testing.T) {
	raw, err := os.ReadFile("protocol.json")
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Version     int                       `json:"version"`
		Envelope    map[string]any            `json:"envelope"`
		Transitions []string                  `json:"transitions"`
		PlainCause  map[string]any            `json:"plainCause"`
		Env         map[string]any            `json:"env"`
		Scratch     map[string]any            `json:"scratch"`
		Types       map[string]map[string]any `json:"types"`
		Messages    map[string]map[string]any `json:"messages"`
	}
	if err := json.Unmarshal(raw, &spec); err != nil {
		t.Fatal(err)
	}
	if spec.Version != ProtocolVersion {
		t.Errorf("protocol.json version %d, Go ProtocolVersion %d", spec.Version, ProtocolVersion)
	}
	if spec.Env["address"] != EnvAddress || spec.Env["token"] != EnvToken {
		t.Errorf("env names differ: %v vs %s/%s", spec.Env, EnvAddress, EnvToken)
	}
	if spec.Env["dryRunOnly"] != EnvDryRunOnly {
		t.Errorf("dry-run env name differs: %v vs %s", spec.Env["dryRunOnly"], EnvDryRunOnly)
	}
	if spec.Env["checkNamespace"] != EnvCheckNamespace || spec.Env["checkHoldAfterWrites"] != EnvCheckHoldAfterWrites || spec.Env["checkFreezeCacheAt"] != EnvCheckFreezeCacheAt || spec.Env["checkClusterObject"] != EnvCheckClusterObject || spec.Env["checkFreezeResources"] != EnvCheckFreezeResources {
		t.Errorf("check env names differ: %v", spec.Env)
	}
	if spec.Scratch["namespacePrefix"] != ScratchNamespacePrefix || spec.Scratch["label"] != ScratchLabel {
		t.Errorf("scratch copies: protocol.json %v, Go %s / %s", spec.Scratch, ScratchNamespacePrefix, ScratchLabel)
	}
	if !reflect.DeepEqual(spec.Transitions, TransitionNames[:]) {
		t.Errorf("transitions: protocol.json %v, Go %v", spec.Transitions, TransitionNames)
	}
	if c := plainCause(0); spec.PlainCause["kind"] != c.Kind || spec.PlainCause["note"] != c.Note || len(spec.PlainCause) != 2 {
		t.Errorf("plainCause: protocol.json %v, Go %+v", spec.PlainCause, c)
	}
	if spec.Envelope["type"] != "string" {
		t.Errorf("envelope.type should be string, is %v", spec.Envelope["type"])
	}
	goStruct := func(name string) (reflect.Type, bool) {
		if v, ok := typeNames[name]; ok {
			return reflect.TypeOf(v), true
		}
		if v, ok := messageTypes[name]; ok {
			return reflect.TypeOf(v), true
		}
		return nil, false
	}
	if got, want := keys(messageTypes), keys(spec.Messages); !reflect.DeepEqual(got, want) {
		t.Errorf("messages: Go %v, protocol.json %v", got, want)
	}
	if got, want := keys(typeNames), keys(spec.Types); !reflect.DeepEqual(got, want) {
		t.Errorf("types: Go %v, protocol.json %v", got, want)
	}
	check := func(where string, fields map[string]any, gt reflect.Type) {
		seen := map[string]bool{}
		for i := 0; i < gt.NumField(); i++ {
			f := gt.Field(i)
			tag := f.Tag.Get("json")
			name, opts, _ := strings.Cut(tag, ",")
			if name == "" || name == "-" {
				t.Errorf("%s: Go field %s has no json name", where, f.Name)
				continue
			}
			seen[name] = true
			specType, ok := fields[name].(string)
			if !ok {
				t.Errorf("%s.%s: in Go, not in protocol.json", where, name)
				continue
			}
			optional := strings.HasSuffix(specType, "?")
			if omit := strings.Contains(opts, "omitempty"); omit != optional {
				t.Errorf("%s.%s: protocol.json %q but Go omitempty=%v", where, name, specType, omit)
			}
			if msg := typeMatches(strings.TrimSuffix(specType, "?"), f.Type, optional, goStruct); msg != "" {
				t.Errorf("%s.%s: protocol.json %q, Go %s: %s", where, name, specType, f.Type, msg)
			}
		}
		for name := range fields {
			if strings.HasPrefix(name, "$") {
				continue
			}
			if !seen[name] {
				t.Errorf("%s.%s: in protocol.json, not in Go", where, name)
			}
			if name == "type" {
				t.Errorf("%s: a field named \"type\" collides with the envelope", where)
			}
		}
	}
	for name, fields := range spec.Messages {
		if gt, ok := goStruct(name); ok {
			check("messages."+name, fields, gt)
			if messageName(reflect.New(gt).Interface()) != name {
				t.Errorf("messageName(*%s) is not %q", gt.Name(), name)
			}
		}
	}
	for name, fields := range spec.Types {
		if gt, ok := typeNames[name]; ok {
			check("types."+name, fields, reflect.TypeOf(gt))
		}
	}
	ops := []string{OpPause, OpResume, OpStep, OpResetBackoff, OpReconcileNow, OpDryRun, OpSnapshot, OpThaw, OpWithhold, OpRelease, OpCacheGet}
	if want, _ := spec.Messages["command"]["$op"].(string); strings.Join(ops, " | ") != want {
		t.Errorf("command ops: Go %v, protocol.json %q", ops, want)
	}
}

// typeMatches returns "" when the Go type can carry the protocol type (pointers only for optional fields).
func typeMatches(spec string, gt reflect.Type, optional bool, goStruct func(string) (reflect.Type, bool)) string {
	if gt.Kind() == reflect.Pointer {
		if !optional {
			return "a pointer for a required field"
		}
		gt = gt.Elem()
	}
	if elem, ok := strings.CutSuffix(spec, "[]"); ok {
		if gt.Kind() != reflect.Slice {
			return "want a slice"
		}
		return typeMatches(elem, gt.Elem(), false, goStruct)
	}
	switch spec {
	case "string":
		if gt.Kind() != reflect.String {
			return "want string"
		}
	case "int":
		switch gt.Kind() {
		case reflect.Int, reflect.Int32, reflect.Int64:
		default:
			return "want an integer"
		}
	case "number":
		switch gt.Kind() {
		case reflect.Float64, reflect.Float32, reflect.Int, reflect.Int64:
		default:
			return "want a number"
		}
	case "bool":
		if gt.Kind() != reflect.Bool {
			return "want bool"
		}
	case "object":
		if gt.Kind() != reflect.Map || gt.Key().Kind() != reflect.String {
			return "want map[string]…"
		}
	case "any":
		if gt.Kind() != reflect.Interface {
			return "want any"
		}
	default:
		want, ok := goStruct(spec)
		if !ok {
			return "unknown protocol type " + spec
		}
		if gt != want {
			return "want " + want.Name()
		}
	}
	return ""
}

func keys[V any](m map[string]V) []string {
	out := []string{}
	for k := range m {
		if !strings.HasPrefix(k, "$") {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// TestEncodeLine: a message line is its fields plus "type", newline-terminated.
func TestEncodeLine(t *testing.T) {
	line, err := encodeLine(&PingMsg{At: 42})
	if err != nil {
		t.Fatal(err)
	}
	if string(line) != "{\"type\":\"ping\",\"at\":42}\n" {
		t.Fatalf("got %q", line)
	}
	line, err = encodeLine(&QueueMsg{Controller: "c", Key: "ns/a", Transition: TransitionAdded, Priority: intPtr(0), At: 1})
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(line, &back); err != nil {
		t.Fatal(err)
	}
	if back["type"] != "queue" || back["priority"] != float64(0) || back["key"] != "ns/a" {
		t.Fatalf("decoded %v", back)
	}
	if _, err := encodeLine(struct{}{}); err == nil {
		t.Fatal("a non-message encoded without error")
	}
}
