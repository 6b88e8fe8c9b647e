package helm

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"sigs.k8s.io/yaml"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/plugins"
)

// Redacted replaces a Secret's value in a plan's diff; RedactedChanged says
// the value changes.
const (
	Redacted        = plugins.Redacted
	RedactedChanged = "(sensitive value, changed)"
)

// objectDiff is what a plan found.
type objectDiff struct {
	text                    string
	added, changed, removed []protocol.HelmObject
}

func (d objectDiff) hasChanges() bool {
	return len(d.added)+len(d.changed)+len(d.removed) > 0
}

// diffObjects compares a release's objects (before) with the objects a
// deploy would leave (after), object by object, as YAML with sorted keys so
// that only content counts. Its text is a unified diff per object, in key
// order; Secrets' values are redacted.
func diffObjects(before, after []object) (objectDiff, error) {
	old := make(map[string]object, len(before))
	for _, o := range before {
		old[o.key()] = o
	}
	cur := make(map[string]object, len(after))
	for _, o := range after {
		cur[o.key()] = o
	}
	keys := slices.Sorted(maps.Keys(old))
	for k := range cur {
		if _, ok := old[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)

	var d objectDiff
	var text strings.Builder
	for _, k := range keys {
		a, inOld := old[k]
		b, inNew := cur[k]
		ac, bc := redactSecret(a, b)
		if inOld && inNew && reflect.DeepEqual(a.content, b.content) {
			continue
		}
		from, to := "a/"+a.path(), "b/"+b.path()
		switch {
		case !inOld:
			from = "/dev/null"
			d.added = append(d.added, b.HelmObject)
		case !inNew:
			to = "/dev/null"
			d.removed = append(d.removed, a.HelmObject)
		default:
			d.changed = append(d.changed, b.HelmObject)
		}
		diff, err := unifiedDiff(from, to, ac, bc)
		if err != nil {
			return d, err
		}
		text.WriteString(diff)
	}
	d.text = text.String()
	return d, nil
}

// unifiedDiff is the unified diff of an object's two sides as YAML with
// sorted keys (a nil side: no object).
func unifiedDiff(from, to string, a, b map[string]any) (string, error) {
	oldText, err := toYAML(a)
	if err != nil {
		return "", err
	}
	newText, err := toYAML(b)
	if err != nil {
		return "", err
	}
	return difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: lines(oldText), B: lines(newText),
		FromFile: from, ToFile: to, Context: 3,
	})
}

// lines splits text into lines that keep their "\n" (none for no text).
func lines(text string) []string {
	if text == "" {
		return nil
	}
	return difflib.SplitLines(strings.TrimSuffix(text, "\n"))
}

func toYAML(content map[string]any) (string, error) {
	if content == nil {
		return "", nil
	}
	b, err := yaml.Marshal(content)
	if err != nil {
		return "", fmt.Errorf("writing an object as YAML: %w", err)
	}
	return string(b), nil
}

// redactSecret returns the contents of a Secret's two sides with the values
// of data and stringData replaced: Redacted where a value stays,
// RedactedChanged where it changes or is new. Other objects are returned as
// they are.
func redactSecret(a, b object) (map[string]any, map[string]any) {
	if !isSecret(a) && !isSecret(b) {
		return a.content, b.content
	}
	ac, bc := copyMap(a.content), copyMap(b.content)
	for _, field := range []string{"data", "stringData"} {
		av, _ := ac[field].(map[string]any)
		bv, _ := bc[field].(map[string]any)
		for k, v := range bv {
			if old, ok := av[k]; ok && reflect.DeepEqual(old, v) {
				bv[k] = Redacted
			} else {
				bv[k] = RedactedChanged
			}
		}
		for k := range av {
			av[k] = Redacted
		}
	}
	return ac, bc
}

func isSecret(o object) bool {
	return o.content != nil && o.Kind == "Secret" && o.APIVersion == "v1"
}

// copyMap copies a map and the maps at its first level, which redactSecret
// changes.
func copyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := maps.Clone(m)
	for k, v := range out {
		if vm, ok := v.(map[string]any); ok {
			out[k] = maps.Clone(vm)
		}
	}
	return out
}
