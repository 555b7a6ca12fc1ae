package bridge

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A 422 on a Secret patch quotes the patched Secret: the journaled write's error and the reconcile's error that
// wraps it name the field and the reason, never a value.
func TestMaskSecretText(t *testing.T) {
	stored := base64.StdEncoding.EncodeToString([]byte("SUPERSECRET-P1"))
	raw := `secrets "patch.me-1" is invalid: patch: Invalid value: "{\"apiVersion\":\"v1\",\"data\":{\"apiKey\":\"` + stored + `\",\"bad\":\"PATCHSECRET-notbase64!!\",\"pin\":\"MTIz\"}}": error decoding from json: illegal base64 data at input byte 11`
	got := maskSecretText(raw, nil)
	want := `secrets "patch.me-1" is invalid: patch: Invalid value: "***": error decoding from json: illegal base64 data at input byte 11`
	if got != want {
		t.Fatalf("masked:\n got %s\nwant %s", got, want)
	}
	// Known values wherever they appear: as given, base64-encoded, decoded.
	got = maskSecretText("a tok-9f8e7d b "+base64.StdEncoding.EncodeToString([]byte("tok-9f8e7d"))+" c plain-pass d", []string{"tok-9f8e7d", base64.StdEncoding.EncodeToString([]byte("plain-pass"))})
	if got != "a *** b *** c *** d" {
		t.Fatalf("known values: %s", got)
	}
	// A non-string rendering of a value, up to the field error's next ": ".
	if got := maskSecretText(`data: Invalid value: map[string][]uint8{"k":[]uint8{0x61}}: bad`, nil); got != `data: Invalid value: "***": bad` {
		t.Fatalf("non-string value: %s", got)
	}
	// Words stay readable.
	if s := `Operation cannot be fulfilled on secrets "db": the object has been modified`; maskSecretText(s, nil) != s {
		t.Fatalf("changed a message without values: %s", maskSecretText(s, nil))
	}
}

func TestReconcileErrorWrappingASecretWriteErrorIsMasked(t *testing.T) {
	ri := &reconcileInfo{}
	raw := `secrets "db" is invalid: patch: Invalid value: "{\"data\":{\"k\":\"c2VjcmV0LXZhbHVlLTEyMw==\"}}": bad`
	ri.noteSecretError(raw, maskSecretText(raw, nil))
	got := ri.maskSecretErrors("ensure secret: " + raw)
	if strings.Contains(got, "c2VjcmV0") || got != `ensure secret: secrets "db" is invalid: patch: Invalid value: "***": bad` {
		t.Fatalf("reconcile error: %s", got)
	}
	if (*reconcileInfo)(nil).maskSecretErrors("x") != "x" {
		t.Fatal("nil reconcileInfo")
	}
}

// The cases of testdata/secretmask.json, which the TypeScript side's test (test/unit/k8s/secretMask.test.ts) reads
// too: the bridge masks a Secret write's error exactly as the editor does.
func TestMaskSecretTextSharedCases(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "secretmask.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []struct {
			Name string         `json:"name"`
			Text string         `json:"text"`
			Body map[string]any `json:"body"`
			Want string         `json:"want"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Cases) < 5 {
		t.Fatalf("only %d cases in testdata/secretmask.json", len(doc.Cases))
	}
	for _, c := range doc.Cases {
		var known, public []string
		if c.Body != nil {
			known = secretValues(c.Body)
			public = secretPublicNames(c.Body)
		}
		if got := maskSecretText(c.Text, known, public...); got != c.Want {
			t.Errorf("%s:\n got %s\nwant %s", c.Name, got, c.Want)
		}
	}
}

// secretPublicNames is the name, namespace and generateName in the metadata of the Secrets given as maps (nil
// skipped): the strings maskSecretText may leave in a message, as the shared cases give them (the journal passes the
// write's own name and namespace).
func secretPublicNames(objs ...map[string]any) []string {
	var out []string
	for _, o := range objs {
		if m, ok := o["metadata"].(map[string]any); ok {
			for _, f := range []string{"name", "namespace", "generateName"} {
				if s, ok := m[f].(string); ok && s != "" {
					out = append(out, s)
				}
			}
		}
	}
	return out
}
