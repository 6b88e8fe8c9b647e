package appconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"text/template"
	"text/template/parse"

	"github.com/outpost-dev/outpost/protocol"
)

// Data is what templates are rendered with.
type Data struct {
	InstallID   string
	InstallName string
	// Inputs are the install's inputs (see Config.ResolveInputs).
	Inputs map[string]Value
	// SandboxOutputs are the sandbox's outputs (see OutputValues).
	SandboxOutputs map[string]Value
	// Components are the outputs of deployed components, by component.
	Components map[string]map[string]Value
	// Actions are the outputs of the install's latest succeeded run of
	// each action the templates read (see Config.ActionsRead); an action
	// never run successfully is not there.
	Actions map[string]ActionOutputs

	// actionInputs are an action run's inputs (RenderActionEnv).
	actionInputs map[string]Value
}

// Sensitive is the text of every sensitive value templates may read (the
// install's sensitive inputs, the sandbox's and components' sensitive
// outputs), sorted, without repeats: what a job's runner scrubs from what it
// sends back (protocol.TerraformManifest.Scrub).
func (d Data) Sensitive() []string {
	var out []string
	add := func(vs map[string]Value) {
		for _, v := range vs {
			if v.Sensitive {
				out = protocol.ScrubLeaves(out, v.Value)
			}
		}
	}
	add(d.Inputs)
	add(d.SandboxOutputs)
	add(d.actionInputs)
	for _, outs := range d.Components {
		add(outs)
	}
	for _, ao := range d.Actions {
		add(ao.Outputs)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (d Data) templateData() map[string]any {
	plain := func(vs map[string]Value) map[string]any {
		out := make(map[string]any, len(vs))
		for k, v := range vs {
			out[k] = v.Value
		}
		return out
	}
	cmps := make(map[string]any, len(d.Components))
	for name, outs := range d.Components {
		cmps[name] = map[string]any{"outputs": plain(outs)}
	}
	actions := make(map[string]any, len(d.Actions))
	for name, ao := range d.Actions {
		actions[name] = map[string]any{"outputs": plain(ao.Outputs)}
	}
	return map[string]any{
		"install":    map[string]any{"id": d.InstallID, "name": d.InstallName, "inputs": plain(d.Inputs)},
		"sandbox":    map[string]any{"outputs": plain(d.SandboxOutputs)},
		"components": cmps,
		"action":     map[string]any{"inputs": plain(d.actionInputs)},
		"actions":    actions,
	}
}

// Rendered are a terraform module's variables and environment, ready for a
// job manifest.
type Rendered struct {
	Variables map[string]json.RawMessage `json:"variables"`
	EnvVars   map[string]string          `json:"env_vars"`
	// Sensitive lists, sorted, the keys ("variables.<name>", "env_vars.<NAME>") whose values come
	// from a sensitive input or output, or feed a variable the module declares sensitive: show
	// them only Redacted.
	Sensitive []string `json:"sensitive"`
}

// IsSensitive reports whether the value at key ("variables.x",
// "env_vars.X") is sensitive, or lies within one that is.
func (r *Rendered) IsSensitive(key string) bool {
	return newRedaction(r.Sensitive).covers(key)
}

// Redacted returns a copy whose sensitive values are RedactedValue.
func (r *Rendered) Redacted() *Rendered {
	out, _ := r.redact()
	return out
}

// Secrets returns the sensitive values as they may appear in text (a string
// as is, anything else as JSON), longest first, so a log can be scrubbed of
// them.
func (r *Rendered) Secrets() []string {
	_, secrets := r.redact()
	return secrets
}

// redact walks the variables and the environment, each value at its key.
func (r *Rendered) redact() (*Rendered, []string) {
	out := &Rendered{Variables: map[string]json.RawMessage{}, EnvVars: map[string]string{}, Sensitive: append([]string{}, r.Sensitive...)}
	red := newRedaction(r.Sensitive)
	redacted, _ := json.Marshal(RedactedValue)
	for k, v := range r.Variables {
		if _, hidden := red.walk("variables."+k, v); hidden {
			v = redacted
		}
		out.Variables[k] = v
	}
	for k, v := range r.EnvVars {
		if _, hidden := red.walk("env_vars."+k, v); hidden {
			v = RedactedValue
		}
		out.EnvVars[k] = v
	}
	return out, red.texts()
}

// RenderSandbox renders the sandbox's variables and environment.
func (c *Config) RenderSandbox(d Data) (*Rendered, error) {
	return c.render(owner{file: ConfigFile, prefix: "sandbox."}, &c.Sandbox, d)
}

// RenderComponent renders a terraform component's variables and
// environment. d must hold the outputs of the components it references.
func (c *Config) RenderComponent(name string, d Data) (*Rendered, error) {
	cmp, ok := c.byName[name]
	if !ok {
		return nil, fmt.Errorf("appconfig: no component %q", name)
	}
	if cmp.Terraform == nil {
		return nil, fmt.Errorf("appconfig: component %q is a %s, not a terraform module", name, cmp.Type)
	}
	return c.render(owner{file: cmp.File, self: &cmp.Name}, cmp.Terraform, d)
}

// RenderComponentEnv renders a terraform component's environment only: for
// a job queued before the outputs its variables read exist. d must hold what
// the environment reads (see EnvReadsComponents).
func (c *Config) RenderComponentEnv(name string, d Data) (*Rendered, error) {
	cmp, ok := c.byName[name]
	if !ok || cmp.Terraform == nil {
		return nil, fmt.Errorf("appconfig: no terraform component %q", name)
	}
	envOnly := *cmp.Terraform
	envOnly.Variables = nil
	return c.render(owner{file: cmp.File, self: &cmp.Name}, &envOnly, d)
}

// EnvReadsComponents reports whether a terraform component's environment
// variables read other components' outputs, so that it cannot be rendered
// before they are deployed.
func (c *Config) EnvReadsComponents(name string) bool {
	return c.envReads(name, refComponentOutput)
}

// EnvReadsSandbox reports whether a terraform component's environment
// variables read the sandbox's outputs, so that it cannot be rendered before
// the sandbox is applied.
func (c *Config) EnvReadsSandbox(name string) bool {
	return c.envReads(name, refSandboxOutput)
}

// envReads reports whether a terraform component's environment variables
// make a reference of the kind.
func (c *Config) envReads(name string, kind refKind) bool {
	cmp, ok := c.byName[name]
	if !ok || cmp.Terraform == nil {
		return false
	}
	var ps problems
	env := &TerraformModule{EnvVars: cmp.Terraform.EnvVars}
	found := false
	c.eachRef(&ps, owner{file: cmp.File, self: &cmp.Name}, env.templatedSettings(), func(_ string, r ref) {
		found = found || r.kind == kind
	})
	return found
}

// render renders every template of tm. Errors are Problems.
func (c *Config) render(o owner, tm *TerraformModule, d Data) (*Rendered, error) {
	var ps problems
	data := d.templateData()
	out := &Rendered{Variables: map[string]json.RawMessage{}, EnvVars: map[string]string{}, Sensitive: []string{}}
	sensitive := map[string]bool{}
	for _, name := range sortedKeys(tm.Variables) {
		key := "variables." + name
		v, secret, ok := c.renderValue(&ps, o, key, tm.Variables[name], d, data, nil)
		if !ok {
			continue
		}
		raw, err := json.Marshal(v)
		if err != nil {
			ps.add(o.file, o.prefix+key, "cannot encode the rendered value: %v", err)
			continue
		}
		out.Variables[name] = raw
		if secret || (tm.Module != nil && tm.Module.Variables[name].Sensitive) {
			sensitive[key] = true
		}
	}
	for _, name := range sortedKeys(tm.EnvVars) {
		key := "env_vars." + name
		s, secret, ok := c.renderText(&ps, o, key, tm.EnvVars[name], d, data)
		if !ok {
			continue
		}
		out.EnvVars[name] = s
		if secret {
			sensitive[key] = true
		}
	}
	if err := ps.err(); err != nil {
		return nil, err
	}
	out.Sensitive = sortedKeys(sensitive)
	return out, nil
}

// renderValue renders the templates within v and reports whether any of
// them reads a sensitive value; mark, when not nil, is called with the key
// of each string whose template does.
func (c *Config) renderValue(ps *problems, o owner, key string, v any, d Data, data map[string]any, mark func(key string)) (any, bool, bool) {
	switch x := v.(type) {
	case string:
		r, secret, ok := c.renderString(ps, o, key, x, d, data)
		if secret && ok && mark != nil {
			mark(key)
		}
		return r, secret, ok
	case []any:
		out := make([]any, len(x))
		secret, good := false, true
		for i, e := range x {
			r, s, ok := c.renderValue(ps, o, fmt.Sprintf("%s[%d]", key, i), e, d, data, mark)
			out[i], secret, good = r, secret || s, good && ok
		}
		return out, secret, good
	case map[string]any:
		out := make(map[string]any, len(x))
		secret, good := false, true
		for _, k := range sortedKeys(x) {
			r, s, ok := c.renderValue(ps, o, key+"."+k, x[k], d, data, mark)
			out[k], secret, good = r, secret || s, good && ok
		}
		return out, secret, good
	}
	return v, false, true
}

// renderText renders one template as text (asText), and reports whether it
// reads a sensitive value.
func (c *Config) renderText(ps *problems, o owner, key, s string, d Data, data map[string]any) (string, bool, bool) {
	v, secret, ok := c.renderString(ps, o, key, s, d, data)
	if !ok {
		return "", false, false
	}
	text, err := asText(v)
	if err != nil {
		ps.add(o.file, o.prefix+key, "cannot encode the rendered value: %v", err)
		return "", false, false
	}
	return text, secret, true
}

// renderString renders one template. A template that is a single action
// (e.g. "{{ .install.inputs.replicas }}") keeps the type of its value; any
// other renders to a string.
func (c *Config) renderString(ps *problems, o owner, key, s string, d Data, data map[string]any) (any, bool, bool) {
	fail := func(format string, args ...any) (any, bool, bool) {
		ps.add(o.file, o.prefix+key, format, args...)
		return nil, false, false
	}
	t, err := parseTemplate(key, s)
	if err != nil {
		return fail("invalid template: %s", trimTemplateErr(err))
	}
	paths, bad := references(t)
	if len(bad) > 0 {
		return fail("%s", bad[0])
	}
	secret := false
	for _, p := range paths {
		r, msg := c.classify(o, p)
		if msg != "" {
			return fail("%s", msg)
		}
		var val Value
		var found, declared bool
		switch r.kind {
		case refInstall:
			found = true
		case refInput:
			val, found = d.Inputs[r.name]
			in, _ := c.input(r.name)
			declared = in.Sensitive
			if !found {
				return fail("input %q has no value", r.name)
			}
		case refSandboxOutput:
			val, found = d.SandboxOutputs[r.name]
			if m := c.Sandbox.Module; m != nil {
				declared = m.Outputs[r.name].Sensitive
			}
			if !found {
				return fail("the sandbox has no output %q (is it provisioned?)", r.name)
			}
		case refComponentOutput:
			val, found = d.Components[r.component][r.name]
			if cmp := c.byName[r.component]; cmp.Terraform != nil && cmp.Terraform.Module != nil {
				declared = cmp.Terraform.Module.Outputs[r.name].Sensitive
			}
			if !found {
				return fail("component %q has no output %q (is it deployed?)", r.component, r.name)
			}
		case refActionInput:
			val, found = d.actionInputs[r.name]
			if !found {
				return fail("input %q of the action has no value", r.name)
			}
		case refActionOutput:
			var msg string
			if val, msg = c.actionOutput(d, r); msg != "" {
				return fail("%s", msg)
			}
		}
		secret = secret || val.Sensitive || declared
	}
	if root := t.Tree.Root; len(root.Nodes) == 1 {
		if a, ok := root.Nodes[0].(*parse.ActionNode); ok && len(a.Pipe.Decl) == 0 {
			v, err := evalPipe(key, a.Pipe, data)
			if err != nil {
				return fail("%s", trimTemplateErr(err))
			}
			return v, secret, true
		}
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		return fail("%s", trimTemplateErr(err))
	}
	return buf.String(), secret, true
}

// evalPipe evaluates one pipeline and returns its value, not its text.
func evalPipe(key string, pipe *parse.PipeNode, data map[string]any) (any, error) {
	var got any
	t, err := template.New(key).Option("missingkey=error").
		Funcs(template.FuncMap{"outpostCapture": func(v any) string { got = v; return "" }}).
		Parse("{{ outpostCapture (" + pipe.String() + ") }}")
	if err != nil {
		return nil, err
	}
	if err := t.Execute(&bytes.Buffer{}, data); err != nil {
		return nil, err
	}
	return got, nil
}

// asText is a rendered value as text: a string as it is, any other value as
// JSON.
func asText(v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	b, err := json.Marshal(v)
	return string(b), err
}
