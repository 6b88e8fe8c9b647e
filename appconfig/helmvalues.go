package appconfig

import (
	"encoding/json"
	"fmt"
	"io/fs"
)

// RenderedValues are a helm component's values, ready for a job manifest.
type RenderedValues struct {
	// Values is a JSON object: the component's values, rendered. It is
	// merged over the chart's values.yaml and the values files.
	Values json.RawMessage `json:"values"`
	// Sensitive lists, sorted, the keys of the smallest values holding a template that reads a
	// sensitive input or output ("values.db.password", "values.hosts[1]"): show them only Redacted.
	Sensitive []string `json:"sensitive"`
}

// IsSensitive reports whether the value at key ("values.db.password") is
// sensitive, or lies within one that is.
func (r *RenderedValues) IsSensitive(key string) bool {
	return newRedaction(r.Sensitive).covers(key)
}

// Redacted returns a copy whose sensitive values are RedactedValue.
func (r *RenderedValues) Redacted() *RenderedValues {
	out, _ := r.redact()
	return out
}

// Secrets returns the sensitive values as they may appear in text (a string
// as is, anything else as JSON), longest first, so a log can be scrubbed of
// them.
func (r *RenderedValues) Secrets() []string {
	_, secrets := r.redact()
	return secrets
}

// redact walks the values from their root, "values". Values that are not
// JSON are redacted whole, and have no secrets to list.
func (r *RenderedValues) redact() (*RenderedValues, []string) {
	out := &RenderedValues{Values: r.Values, Sensitive: append([]string{}, r.Sensitive...)}
	red := newRedaction(r.Sensitive)
	if len(r.Sensitive) == 0 {
		return out, red.texts()
	}
	v, err := decodeJSON(r.Values)
	if err != nil {
		out.Values, _ = json.Marshal(RedactedValue)
		return out, nil
	}
	v, _ = red.walk("values", v)
	out.Values, _ = json.Marshal(v)
	return out, red.texts()
}

// RenderHelmValues renders a helm component's values, with the same data
// and rules as RenderComponent renders a terraform component's variables.
// d must hold the outputs of the components it references. Errors are
// Problems naming the file and key.
func (c *Config) RenderHelmValues(name string, d Data) (*RenderedValues, error) {
	cmp, ok := c.byName[name]
	if !ok {
		return nil, fmt.Errorf("appconfig: no component %q", name)
	}
	if cmp.Helm == nil {
		return nil, fmt.Errorf("appconfig: component %q is a %s, not a helm chart", name, cmp.Type)
	}
	var ps problems
	o := owner{file: cmp.File, self: &cmp.Name}
	sensitive := map[string]bool{}
	mark := func(key string) { sensitive[key] = true }
	v, _, _ := c.renderValue(&ps, o, "values", cmp.Helm.Values, d, d.templateData(), mark)
	if err := ps.err(); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("appconfig: %s: values: %w", cmp.File, err)
	}
	// A key within a sensitive one is covered by it.
	keys := sortedKeys(sensitive)
	out := &RenderedValues{Values: raw, Sensitive: []string{}}
	for _, k := range keys {
		if !out.IsSensitive(k) {
			out.Sensitive = append(out.Sensitive, k)
		}
	}
	return out, nil
}

// RenderHelmKubeconfig renders a helm component's kubeconfig template; ""
// when it has none (the release goes to the sandbox's cluster). A value
// that is not a string is a Problem naming the key.
func (c *Config) RenderHelmKubeconfig(name string, d Data) (string, error) {
	cmp, ok := c.byName[name]
	if !ok || cmp.Helm == nil {
		return "", fmt.Errorf("appconfig: no helm_chart component %q", name)
	}
	if cmp.Helm.Kubeconfig == "" {
		return "", nil
	}
	var ps problems
	o := owner{file: cmp.File, self: &cmp.Name}
	v, _, _ := c.renderValue(&ps, o, "kubeconfig", cmp.Helm.Kubeconfig, d, d.templateData(), nil)
	if err := ps.err(); err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok || s == "" {
		ps.add(cmp.File, "kubeconfig", "rendered %s, not a kubeconfig's text", describeRendered(v))
		return "", ps.err()
	}
	return s, nil
}

// describeRendered names what a template rendered, for an error message.
func describeRendered(v any) string {
	if s, ok := v.(string); ok && s == "" {
		return "an empty string"
	}
	return fmt.Sprintf("a %T", v)
}

// HelmValuesFiles returns the contents of a helm component's values files,
// in order (as protocol.HelmManifest.ValuesFiles takes them). They are not
// templates, and what they hold is not tracked as sensitive.
func (c *Config) HelmValuesFiles(name string) ([]string, error) {
	cmp, ok := c.byName[name]
	if !ok {
		return nil, fmt.Errorf("appconfig: no component %q", name)
	}
	if cmp.Helm == nil {
		return nil, fmt.Errorf("appconfig: component %q is a %s, not a helm chart", name, cmp.Type)
	}
	out := make([]string, len(cmp.Helm.ValuesFiles))
	for i, p := range cmp.Helm.ValuesFiles {
		data, err := fs.ReadFile(c.fsys, p)
		if err != nil {
			return nil, fmt.Errorf("appconfig: values file of %s: %w", name, err)
		}
		out[i] = string(data)
	}
	return out, nil
}
