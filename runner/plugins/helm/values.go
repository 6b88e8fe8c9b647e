package helm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/outpost-dev/outpost/protocol"
)

// values merges the values files, in order, then the values object: what
// `helm -f a.yaml -f b.yaml --set-json …` gives the chart, over its own
// values.yaml.
func values(files []string, object json.RawMessage) (map[string]any, error) {
	out := map[string]any{}
	for i, f := range files {
		v, err := chartutil.ReadValues([]byte(f))
		if err != nil {
			return nil, fmt.Errorf("values_files[%d]: %w", i, err)
		}
		out = mergeValues(out, v)
	}
	if len(bytes.TrimSpace(object)) > 0 && string(bytes.TrimSpace(object)) != "null" {
		if bytes.TrimSpace(object)[0] != '{' {
			return nil, fmt.Errorf("values: must be a JSON object")
		}
		v, err := chartutil.ReadValues(object)
		if err != nil {
			return nil, fmt.Errorf("values: %w", err)
		}
		out = mergeValues(out, v)
	}
	return out, nil
}

// mergeValues merges b into a, as helm's CLI merges values files: maps merge
// key by key, anything else in b replaces what a has.
func mergeValues(a, b map[string]any) map[string]any {
	for k, v := range b {
		if bm, ok := v.(map[string]any); ok {
			if am, ok := a[k].(map[string]any); ok {
				a[k] = mergeValues(am, bm)
				continue
			}
		}
		a[k] = v
	}
	return a
}

// sensitiveStrings returns the values at keys ("values.db.password",
// "values.hosts[1]", the "values." prefix optional) of the values object, as
// text: every string and number at or within each key. A key that names
// nothing is an error naming it.
func sensitiveStrings(object json.RawMessage, keys []string) ([]string, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	var root any
	if len(bytes.TrimSpace(object)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(object))
		dec.UseNumber()
		if err := dec.Decode(&root); err != nil {
			return nil, fmt.Errorf("values: %w", err)
		}
	}
	var out []string
	for i, key := range keys {
		v, ok := lookup(root, strings.TrimPrefix(key, "values."))
		if !ok {
			return nil, fmt.Errorf("sensitive_values[%d]: %q names no value", i, key)
		}
		out = protocol.ScrubLeaves(out, v)
	}
	return out, nil
}

// lookup follows a key such as "db.password" or "hosts[1].name".
func lookup(v any, key string) (any, bool) {
	for _, part := range strings.Split(key, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if name != "" {
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			if v, ok = m[name]; !ok {
				return nil, false
			}
		}
		for rest != "" {
			idx, after, ok := strings.Cut(rest, "]")
			n, err := strconv.Atoi(idx)
			l, isList := v.([]any)
			if !ok || err != nil || !isList || n < 0 || n >= len(l) {
				return nil, false
			}
			v, rest = l[n], strings.TrimPrefix(after, "[")
		}
	}
	return v, true
}
