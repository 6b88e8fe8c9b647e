package appconfig

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/outpost-dev/outpost/contract"
)

// kind is what a key's value must be.
type kind int

const (
	kString     kind = iota
	kBool            // true or false
	kStringList      // a list of strings
	kTable           // a table with the keys of field.fields
	kTableList       // an array of tables ([[key]]) with the keys of field.fields
	kValueMap        // a table of any values (terraform variables, helm values)
	kStringMap       // a table of strings (environment variables)
	kAny             // any value; checked by the caller (an input's default)
)

// field is one key a file may hold.
type field struct {
	key      string
	kind     kind
	required bool
	fields   []field // of a kTable or kTableList
}

// The keys of each kind of file. docs/APP_CONFIG.md and
// schemas/app-config.schema.json describe the same, and a test checks that
// the schema agrees.
var (
	inputFields = []field{
		{key: "name", kind: kString, required: true},
		{key: "type", kind: kString, required: true},
		{key: "default", kind: kAny},
		{key: "required", kind: kBool},
		{key: "sensitive", kind: kBool},
		{key: "description", kind: kString},
	}
	terraformFields = []field{
		{key: "source", kind: kString, required: true},
		{key: "variables", kind: kValueMap},
		{key: "env_vars", kind: kStringMap},
	}
	configFileFields = []field{
		{key: "app", kind: kTable, required: true, fields: []field{
			{key: "name", kind: kString, required: true},
			{key: "description", kind: kString},
		}},
		{key: "sandbox", kind: kTable, required: true, fields: terraformFields},
		{key: "inputs", kind: kTableList, fields: inputFields},
	}
	componentCommonFields = []field{
		{key: "name", kind: kString, required: true},
		{key: "type", kind: kString, required: true},
		{key: "dependencies", kind: kStringList},
	}
	helmChartFields = []field{
		{key: "source", kind: kString, required: true},
		{key: "release_name", kind: kString},
		{key: "namespace", kind: kString},
		{key: "create_namespace", kind: kBool},
		{key: "values", kind: kValueMap},
		{key: "values_files", kind: kStringList},
		{key: "timeout", kind: kString},
		{key: "wait", kind: kBool},
		{key: "kubeconfig", kind: kString},
		{key: "relocate_images", kind: kBool},
		{key: "images", kind: kStringList},
	}
	containerImageFields = []field{
		{key: "image", kind: kString, required: true},
		{key: "plain_http", kind: kBool},
	}
	dockerBuildFields = []field{
		{key: "context", kind: kString, required: true},
		{key: "dockerfile", kind: kString},
		{key: "build_args", kind: kStringMap},
		{key: "target", kind: kString},
	}
	// componentTypeFields are the keys each supported component type adds.
	componentTypeFields = map[string][]field{
		contract.TypeTerraformModule: terraformFields,
		contract.TypeHelmChart:       helmChartFields,
		contract.TypeContainerImage:  containerImageFields,
		contract.TypeDockerBuild:     dockerBuildFields,
	}
)

// SupportedTypes are the component types (contract.ComponentTypes) a
// config may use today.
var SupportedTypes = []string{contract.TypeTerraformModule, contract.TypeHelmChart, contract.TypeContainerImage, contract.TypeDockerBuild}

// decodeTOML parses a TOML file into its generic form.
func decodeTOML(ps *problems, file string, data []byte) (map[string]any, bool) {
	var m map[string]any
	if _, err := toml.Decode(string(data), &m); err != nil {
		var pe toml.ParseError
		msg := err.Error()
		if ok := asParseError(err, &pe); ok {
			msg = fmt.Sprintf("invalid TOML at line %d: %s", pe.Position.Line, pe.Message)
		}
		ps.add(file, "", "%s", msg)
		return nil, false
	}
	return m, true
}

func asParseError(err error, pe *toml.ParseError) bool {
	switch e := err.(type) {
	case toml.ParseError:
		*pe = e
		return true
	case *toml.ParseError:
		*pe = *e
		return true
	}
	return false
}

// checkTable reports unknown keys, missing keys and wrong types of m against
// fields, and returns the well-typed known keys only (tables and lists of
// tables checked in depth).
func checkTable(ps *problems, file, prefix string, m map[string]any, fields []field) map[string]any {
	out := map[string]any{}
	known := make([]string, len(fields))
	for i, f := range fields {
		known[i] = f.key
	}
	for _, k := range sortedKeys(m) {
		if !slices.Contains(known, k) {
			msg := fmt.Sprintf("unknown key %q", k)
			if s := suggest(k, known); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			} else {
				msg += fmt.Sprintf(" (known keys: %s)", strings.Join(known, ", "))
			}
			ps.add(file, prefix+k, "%s", msg)
		}
	}
	for _, f := range fields {
		v, ok := m[f.key]
		key := prefix + f.key
		if !ok {
			if f.required {
				ps.add(file, key, "is required")
			}
			continue
		}
		if cv, ok := checkValue(ps, file, key, v, f); ok {
			out[f.key] = cv
		}
	}
	return out
}

func checkValue(ps *problems, file, key string, v any, f field) (any, bool) {
	wrong := func(want string) (any, bool) {
		ps.add(file, key, "must be %s, not %s", want, describe(v))
		return nil, false
	}
	switch f.kind {
	case kString:
		s, ok := v.(string)
		if !ok {
			return wrong("a string")
		}
		return s, true
	case kBool:
		b, ok := v.(bool)
		if !ok {
			return wrong("true or false")
		}
		return b, true
	case kStringList:
		list, ok := v.([]any)
		if !ok {
			return wrong("a list of strings")
		}
		out := make([]string, 0, len(list))
		good := true
		for i, e := range list {
			s, ok := e.(string)
			if !ok {
				ps.add(file, fmt.Sprintf("%s[%d]", key, i), "must be a string, not %s", describe(e))
				good = false
				continue
			}
			out = append(out, s)
		}
		return out, good
	case kTable:
		t, ok := v.(map[string]any)
		if !ok {
			return wrong("a table")
		}
		return checkTable(ps, file, key+".", t, f.fields), true
	case kTableList:
		tables, ok := tableList(v)
		if !ok {
			return wrong("an array of tables ([[" + key + "]])")
		}
		out := make([]map[string]any, len(tables))
		for i, t := range tables {
			out[i] = checkTable(ps, file, fmt.Sprintf("%s[%d].", key, i), t, f.fields)
		}
		return out, true
	case kValueMap:
		t, ok := v.(map[string]any)
		if !ok {
			return wrong("a table")
		}
		out := map[string]any{}
		for _, k := range sortedKeys(t) {
			if at, why, bad := findUnsupported(t[k], key+"."+k); bad {
				ps.add(file, at, "%s", why)
				continue
			}
			out[k] = normalize(t[k])
		}
		return out, true
	case kStringMap:
		t, ok := v.(map[string]any)
		if !ok {
			return wrong("a table of strings")
		}
		out := map[string]string{}
		for _, k := range sortedKeys(t) {
			s, ok := t[k].(string)
			if !ok {
				ps.add(file, key+"."+k, "must be a string, not %s", describe(t[k]))
				continue
			}
			out[k] = s
		}
		return out, true
	case kAny:
		if at, why, bad := findUnsupported(v, key); bad {
			ps.add(file, at, "%s", why)
			return nil, false
		}
		return normalize(v), true
	}
	panic(fmt.Sprintf("appconfig: unknown kind %d", f.kind))
}

// tableList accepts what the TOML decoder makes of an array of tables.
func tableList(v any) ([]map[string]any, bool) {
	switch l := v.(type) {
	case []map[string]any:
		return l, true
	case []any:
		out := make([]map[string]any, len(l))
		for i, e := range l {
			t, ok := e.(map[string]any)
			if !ok {
				return nil, false
			}
			out[i] = t
		}
		return out, true
	}
	return nil, false
}

// findUnsupported returns the key of the first value within v that has no
// JSON form (a TOML date or time, inf or nan) and why; path is v's own key.
func findUnsupported(v any, path string) (at, why string, found bool) {
	switch x := v.(type) {
	case time.Time:
		return path, "dates and times are not supported: write the value as a string", true
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return path, "inf and nan are not supported", true
		}
	case []any:
		for i, e := range x {
			if at, why, ok := findUnsupported(e, fmt.Sprintf("%s[%d]", path, i)); ok {
				return at, why, true
			}
		}
	case []map[string]any:
		list := make([]any, len(x))
		for i, e := range x {
			list[i] = e
		}
		return findUnsupported(list, path)
	case map[string]any:
		for _, k := range sortedKeys(x) {
			if at, why, ok := findUnsupported(x[k], path+"."+k); ok {
				return at, why, true
			}
		}
	}
	return "", "", false
}

// describe names a decoded TOML value's type for a message.
func describe(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("a string (%q)", x)
	case int64:
		return fmt.Sprintf("an integer (%d)", x)
	case float64:
		return fmt.Sprintf("a float (%g)", x)
	case bool:
		return fmt.Sprintf("a boolean (%t)", x)
	case time.Time:
		return "a date/time"
	case []any, []map[string]any:
		return "a list"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("a %T", v)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// suggest returns the known key closest to k, if it is a likely typo.
func suggest(k string, known []string) string {
	best, bestD := "", 3
	for _, c := range known {
		if d := editDistance(k, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
