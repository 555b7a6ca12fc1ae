package bridge

import (
	"encoding/base64"
	"regexp"
	"sort"
	"strings"
)

// The API server's error about a refused write to a Secret quotes the Secret's values: a 422 on a patch quotes the
// whole patched object ("patch: Invalid value: \"{…data…}\""). Such an error reaches the editor twice: as the
// journaled write's error, and inside the error the reconciler returns (wrapping it). maskSecretText masks the
// values in the first; reconcileInfo.maskSecretErrors replaces the first's raw text by the masked one in the second.

// invalidValue is a field error's value as the API server quotes it (Go's %q), or any other rendering of a value
// up to the field error's next ": " or the end.
var invalidValue = regexp.MustCompile(`(Invalid value: )(?:"(?:[^"\\]|\\.)*"|[^:"][\s\S]*?(?:: |$))`)

// longOpaque is a long run of base64 / hex characters: a Secret's value carried some other way (masked when it has
// a digit, or mixed case).
var longOpaque = regexp.MustCompile(`[A-Za-z0-9+/=_-]{20,}`)

// maskSecretText is text (an error about a request to Secrets) with every field error's quoted value, each of
// known (values of the Secret's data / stringData: as given, and base64-encoded or decoded) and long base64-looking
// runs masked. It over-masks on purpose (a uid may become ***); field paths and reasons stay. A long run is judged
// without the public strings in it (the Secret's own name, namespace and generateName, which the write names
// unmasked anyway), so `Secret "db-eu-1-credentials" is invalid` keeps the name; a known value is masked even inside
// one. Pure.
func maskSecretText(text string, known []string, public ...string) string {
	out := invalidValue.ReplaceAllStringFunc(text, func(m string) string {
		if strings.HasSuffix(m, ": ") && !strings.HasPrefix(m, `Invalid value: "`) {
			return `Invalid value: "` + secretMask + `": `
		}
		return `Invalid value: "` + secretMask + `"`
	})
	vals := make([]string, 0, 2*len(known))
	for _, v := range known {
		if len(v) < 3 {
			continue
		}
		vals = append(vals, v, base64.StdEncoding.EncodeToString([]byte(v)))
		if d, err := base64.StdEncoding.DecodeString(v); err == nil && len(d) >= 3 {
			vals = append(vals, string(d))
		}
	}
	sort.Slice(vals, func(i, j int) bool { return len(vals[i]) > len(vals[j]) })
	for _, v := range vals {
		out = strings.ReplaceAll(out, v, secretMask)
	}
	return longOpaque.ReplaceAllStringFunc(out, func(run string) string {
		rest := run
		for _, p := range public {
			if len(p) >= 3 {
				rest = strings.ReplaceAll(rest, p, "")
			}
		}
		if strings.ContainsAny(rest, "0123456789") || (strings.ToLower(rest) != rest && strings.ToUpper(rest) != rest) {
			return secretMask
		}
		return run
	})
}

// secretValues is every string value of the data and stringData maps of the Secrets given as maps (nil skipped).
func secretValues(objs ...map[string]any) []string {
	var vals []string
	for _, o := range objs {
		for _, field := range []string{"data", "stringData"} {
			if m, ok := o[field].(map[string]any); ok {
				for _, v := range m {
					if s, ok := v.(string); ok {
						vals = append(vals, s)
					}
				}
			}
		}
	}
	return vals
}

// noteSecretError records that a journaled Secret write of this reconcile failed with raw, reported as masked, so
// that the reconcile's own error (which usually wraps it) is reported masked too. Safe for concurrent use.
func (ri *reconcileInfo) noteSecretError(raw, masked string) {
	if ri == nil || raw == masked {
		return
	}
	ri.mu.Lock()
	ri.secretErrs = append(ri.secretErrs, [2]string{raw, masked})
	ri.mu.Unlock()
}

// maskSecretErrors is text (the reconcile's error) with the raw text of every failed Secret write of this reconcile
// replaced by its masked form.
func (ri *reconcileInfo) maskSecretErrors(text string) string {
	if ri == nil || text == "" {
		return text
	}
	ri.mu.Lock()
	defer ri.mu.Unlock()
	for _, e := range ri.secretErrs {
		text = strings.ReplaceAll(text, e[0], e[1])
	}
	return text
}
