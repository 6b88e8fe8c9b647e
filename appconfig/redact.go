package appconfig

import (
	"encoding/json"
	"fmt"
	"strings"
)

// RedactedValue stands in for a sensitive value.
const RedactedValue = "(sensitive)"

// redaction is the one walk over rendered values that hides sensitive ones:
// Rendered and RenderedValues both redact and list their secrets with it.
type redaction struct {
	sensitive []string        // keys: "variables.x", "values.db.password"
	secrets   map[string]bool // the text of each value hidden so far
}

func newRedaction(sensitive []string) *redaction {
	return &redaction{sensitive: sensitive, secrets: map[string]bool{}}
}

// covers reports whether the value at key is sensitive, or lies within one
// that is.
func (r *redaction) covers(key string) bool {
	for _, k := range r.sensitive {
		if k == key || strings.HasPrefix(key, k+".") || strings.HasPrefix(key, k+"[") {
			return true
		}
	}
	return false
}

// walk returns v, the value at key, with each sensitive value within it
// (or v itself, when it is one, which hidden then says) replaced by
// RedactedValue, and keeps the text of each value it replaces.
func (r *redaction) walk(key string, v any) (out any, hidden bool) {
	if r.covers(key) {
		if s := secretText(v); s != "" {
			r.secrets[s] = true
		}
		return RedactedValue, true
	}
	switch x := v.(type) {
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i], _ = r.walk(fmt.Sprintf("%s[%d]", key, i), e)
		}
		return l, false
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k], _ = r.walk(key+"."+k, e)
		}
		return m, false
	}
	return v, false
}

// texts returns the text of the values walk hid, longest first, so a log
// can be scrubbed of them.
func (r *redaction) texts() []string {
	out := sortedKeys(r.secrets)
	sortByLengthDesc(out)
	return out
}

// secretText is a value as it may appear in text: a string as is, anything
// else as JSON.
func secretText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.RawMessage:
		var s string
		if err := json.Unmarshal(x, &s); err != nil {
			return string(x)
		}
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func sortByLengthDesc(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && len(s[j]) > len(s[j-1]); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
