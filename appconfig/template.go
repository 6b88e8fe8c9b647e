package appconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"text/template"
	"text/template/parse"
)

// Templates see this data:
//
//	.install.id, .install.name
//	.install.inputs.<input>
//	.sandbox.outputs.<output>
//	.components.<component>.outputs.<output>
const refHelp = "templates can use .install.inputs.<name>, .install.id, .install.name, " +
	".sandbox.outputs.<name> and .components.<component>.outputs.<name>"

// parseTemplate parses one templated string; name is its key, for messages.
func parseTemplate(name, s string) (*template.Template, error) {
	return template.New(name).Option("missingkey=error").Parse(s)
}

// references returns the data paths a template reads (each without the
// leading dot) and messages about constructs that read the data in a way
// that cannot be checked (the whole data, a partial path through $).
func references(t *template.Template) (paths [][]string, bad []string) {
	if t.Tree == nil {
		return nil, nil
	}
	var walk func(n parse.Node, root bool)
	// walkBranch: in with and range, dot is the value of the pipeline
	// within the body, and the same as outside in the else branch.
	walkBranch := func(b *parse.BranchNode, root, bodyRoot bool) {
		walk(b.Pipe, root)
		walk(b.List, bodyRoot)
		walk(b.ElseList, root)
	}
	walk = func(n parse.Node, root bool) {
		switch n := n.(type) {
		case *parse.ListNode:
			if n == nil {
				return
			}
			for _, c := range n.Nodes {
				walk(c, root)
			}
		case *parse.ActionNode:
			walk(n.Pipe, root)
		case *parse.PipeNode:
			if n == nil {
				return
			}
			for _, cmd := range n.Cmds {
				args := cmd.Args
				if p, rest, ok := indexPath(args, root); ok {
					paths = append(paths, p)
					args = rest
				}
				for _, arg := range args {
					walk(arg, root)
				}
			}
		case *parse.FieldNode:
			// Within with and range, dot is a value already reached
			// through a checked path.
			if root {
				paths = append(paths, n.Ident)
			}
		case *parse.VariableNode:
			if n.Ident[0] == "$" {
				if len(n.Ident) == 1 {
					bad = append(bad, "$ is the whole template data: name a value ("+refHelp+")")
				} else {
					paths = append(paths, n.Ident[1:])
				}
			}
		case *parse.DotNode:
			if root {
				bad = append(bad, ". is the whole template data: name a value ("+refHelp+")")
			}
		case *parse.ChainNode:
			walk(n.Node, root)
		case *parse.IfNode:
			walkBranch(&n.BranchNode, root, root)
		case *parse.WithNode:
			walkBranch(&n.BranchNode, root, false)
		case *parse.RangeNode:
			walkBranch(&n.BranchNode, root, false)
		case *parse.TemplateNode:
			bad = append(bad, "{{ template }} is not supported")
		}
	}
	walk(t.Tree.Root, true)
	return paths, bad
}

// indexPath reads `index <reference> "key"…` as one reference, so names
// that are not identifiers can be reached ({{ index .sandbox.outputs
// "vpc-id" }}); it returns the arguments left to walk.
func indexPath(args []parse.Node, root bool) ([]string, []parse.Node, bool) {
	if len(args) < 3 {
		return nil, nil, false
	}
	if id, ok := args[0].(*parse.IdentifierNode); !ok || id.Ident != "index" {
		return nil, nil, false
	}
	var base []string
	switch a := args[1].(type) {
	case *parse.FieldNode:
		if !root {
			return nil, nil, false
		}
		base = a.Ident
	case *parse.VariableNode:
		if a.Ident[0] != "$" || len(a.Ident) == 1 {
			return nil, nil, false
		}
		base = a.Ident[1:]
	default:
		return nil, nil, false
	}
	p := append([]string{}, base...)
	i := 2
	for ; i < len(args); i++ {
		str, ok := args[i].(*parse.StringNode)
		if !ok {
			break
		}
		p = append(p, str.Text)
	}
	return p, args[i:], true
}

// refKind says what a reference reads.
type refKind int

const (
	refInstall refKind = iota // .install.id or .install.name
	refInput
	refSandboxOutput
	refComponentOutput
)

// ref is a checked reference.
type ref struct {
	kind      refKind
	component string // of a refComponentOutput
	name      string // the input or output
}

// owner is where templates are: the sandbox or a component.
type owner struct {
	file   string
	prefix string  // of its keys: "sandbox." or ""
	self   *string // the component's name; nil for the sandbox
}

// classify checks a reference path against the config; msg says why it is
// wrong.
func (c *Config) classify(o owner, p []string) (r ref, msg string) {
	shown := "." + strings.Join(p, ".")
	switch p[0] {
	case "install":
		if len(p) == 1 {
			return r, fmt.Sprintf("%s must name a value: .install.inputs.<name>, .install.id or .install.name", shown)
		}
		switch p[1] {
		case "id", "name":
			if len(p) > 2 {
				return r, fmt.Sprintf("%s: .install.%s is a string, it has no fields", shown, p[1])
			}
			return ref{kind: refInstall, name: p[1]}, ""
		case "inputs":
			if len(p) == 2 {
				return r, fmt.Sprintf("%s must name an input: .install.inputs.<name>", shown)
			}
			if _, ok := c.input(p[2]); !ok && !c.inputsUnknown && !c.badInputs[p[2]] {
				return r, fmt.Sprintf("%s: no input %q is declared in %s (inputs: %s)", shown, p[2], ConfigFile, quotedList(c.InputNames()))
			}
			return ref{kind: refInput, name: p[2]}, ""
		}
		return r, fmt.Sprintf("unknown reference %s: %s", shown, refHelp)
	case "sandbox":
		if o.self == nil {
			return r, fmt.Sprintf("%s: the sandbox cannot use its own outputs", shown)
		}
		if len(p) < 3 || p[1] != "outputs" {
			return r, fmt.Sprintf("%s must name a sandbox output: .sandbox.outputs.<name>", shown)
		}
		if m := c.Sandbox.Module; m != nil && !m.partial {
			if _, ok := m.Outputs[p[2]]; !ok {
				return r, fmt.Sprintf("%s: the sandbox module (%s) has no output %q (outputs: %s)", shown, m.Dir, p[2], quotedList(sortedKeys(m.Outputs)))
			}
		}
		return ref{kind: refSandboxOutput, name: p[2]}, ""
	case "components":
		if o.self == nil {
			return r, fmt.Sprintf("%s: the sandbox is provisioned before every component, so it cannot use their outputs", shown)
		}
		if len(p) < 4 || p[2] != "outputs" {
			return r, fmt.Sprintf("%s must name a component output: .components.<component>.outputs.<name>", shown)
		}
		if p[1] == *o.self {
			return r, fmt.Sprintf("%s: a component cannot use its own outputs", shown)
		}
		cmp, ok := c.byName[p[1]]
		if !ok {
			return r, fmt.Sprintf("%s: no component %q (components: %s)", shown, p[1], quotedList(c.ComponentNames()))
		}
		switch {
		case cmp.Terraform != nil:
			if m := cmp.Terraform.Module; m != nil && !m.partial {
				if _, ok := m.Outputs[p[3]]; !ok {
					return r, fmt.Sprintf("%s: component %q (module %s) has no output %q (outputs: %s)", shown, p[1], m.Dir, p[3], quotedList(sortedKeys(m.Outputs)))
				}
			}
		case cmp.Helm != nil || cmp.Image != nil:
			// Their outputs are fixed: strings, a number (revision), a
			// list of strings (objects).
			outs := HelmOutputs
			if cmp.Image != nil {
				outs = ImageOutputs
			}
			if !slices.Contains(outs, p[3]) {
				return r, fmt.Sprintf("%s: component %q (%s) has no output %q (outputs: %s)", shown, p[1], cmp.Type, p[3], quotedList(outs))
			}
			if len(p) > 4 {
				return r, fmt.Sprintf("%s: output %q of component %q (%s) is a %s, it has no fields", shown, p[3], p[1], cmp.Type, scalarOutputType(p[3]))
			}
		}
		return ref{kind: refComponentOutput, component: p[1], name: p[3]}, ""
	}
	return r, fmt.Sprintf("unknown reference %s: %s", shown, refHelp)
}

// eachString calls f for every string within a variable's value, with its
// key ("variables.tags.env", "variables.zones[1]").
func eachString(key string, v any, f func(key, s string)) {
	switch x := v.(type) {
	case string:
		f(key, x)
	case []any:
		for i, e := range x {
			eachString(fmt.Sprintf("%s[%d]", key, i), e, f)
		}
	case map[string]any:
		for _, k := range sortedKeys(x) {
			eachString(key+"."+k, x[k], f)
		}
	}
}

// scalarOutputType names the type of a helm or image output.
func scalarOutputType(name string) string {
	switch name {
	case HelmOutputRevision:
		return "number"
	case HelmOutputObjects:
		return "list"
	}
	return "string"
}

// templated is a setting whose strings are templates: its key
// ("variables.db_url", "env_vars.TF_LOG", "values") and its value.
type templated struct {
	key   string
	value any
}

// templatedSettings are the settings of a terraform module whose strings are
// templates.
func (tm *TerraformModule) templatedSettings() []templated {
	var out []templated
	for _, name := range sortedKeys(tm.Variables) {
		out = append(out, templated{"variables." + name, tm.Variables[name]})
	}
	for _, name := range sortedKeys(tm.EnvVars) {
		out = append(out, templated{"env_vars." + name, tm.EnvVars[name]})
	}
	return out
}

// templatedSettings are a component's settings whose strings are templates.
func (cmp *Component) templatedSettings() []templated {
	switch {
	case cmp.Terraform != nil:
		return cmp.Terraform.templatedSettings()
	case cmp.Helm != nil:
		return []templated{{"values", cmp.Helm.Values}}
	}
	return nil
}

// checkTemplates parses every template of settings, reports bad ones and
// returns the components they reference, each with the first key that does.
func (c *Config) checkTemplates(ps *problems, o owner, settings []templated) map[string]string {
	implied := map[string]string{}
	c.eachRef(ps, o, settings, func(key string, r ref) {
		if r.kind == refComponentOutput {
			if _, seen := implied[r.component]; !seen {
				implied[r.component] = key
			}
		}
	})
	return implied
}

// eachRef calls fn with each valid reference the templates of settings
// make, and adds a problem for each invalid template or reference.
func (c *Config) eachRef(ps *problems, o owner, settings []templated, fn func(key string, r ref)) {
	check := func(key, s string) {
		t, err := parseTemplate(key, s)
		if err != nil {
			ps.add(o.file, o.prefix+key, "invalid template: %s", trimTemplateErr(err))
			return
		}
		paths, bad := references(t)
		for _, msg := range bad {
			ps.add(o.file, o.prefix+key, "%s", msg)
		}
		for _, p := range paths {
			r, msg := c.classify(o, p)
			if msg != "" {
				ps.add(o.file, o.prefix+key, "%s", msg)
				continue
			}
			fn(key, r)
		}
	}
	for _, st := range settings {
		eachString(st.key, st.value, check)
	}
}

// trimTemplateErr drops text/template's "template: <name>:" prefix: the key
// is already named.
func trimTemplateErr(err error) string {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "template: "); ok {
		// "<name>:<line>:<col>: msg" or "<name>:<line>: msg"
		if i := strings.Index(rest, ": "); i >= 0 {
			return rest[i+2:]
		}
	}
	return msg
}

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
	return map[string]any{
		"install":    map[string]any{"id": d.InstallID, "name": d.InstallName, "inputs": plain(d.Inputs)},
		"sandbox":    map[string]any{"outputs": plain(d.SandboxOutputs)},
		"components": cmps,
	}
}

// Rendered are a terraform module's variables and environment, ready for a
// job manifest.
type Rendered struct {
	Variables map[string]json.RawMessage `json:"variables"`
	EnvVars   map[string]string          `json:"env_vars"`
	// Sensitive lists, sorted, the keys ("variables.<name>",
	// "env_vars.<NAME>") whose values come from a sensitive input or output,
	// or feed a variable the module declares sensitive. Show them only
	// redacted (Redacted) in API answers, logs and workflow history.
	Sensitive []string `json:"sensitive"`
}

// RedactedValue stands in for a sensitive value.
const RedactedValue = "(sensitive)"

// IsSensitive reports whether the value at key ("variables.x",
// "env_vars.X") is sensitive.
func (r *Rendered) IsSensitive(key string) bool {
	for _, k := range r.Sensitive {
		if k == key {
			return true
		}
	}
	return false
}

// Redacted returns a copy whose sensitive values are RedactedValue.
func (r *Rendered) Redacted() *Rendered {
	out := &Rendered{Variables: map[string]json.RawMessage{}, EnvVars: map[string]string{}, Sensitive: append([]string{}, r.Sensitive...)}
	redacted, _ := json.Marshal(RedactedValue)
	for k, v := range r.Variables {
		if r.IsSensitive("variables." + k) {
			v = redacted
		}
		out.Variables[k] = v
	}
	for k, v := range r.EnvVars {
		if r.IsSensitive("env_vars." + k) {
			v = RedactedValue
		}
		out.EnvVars[k] = v
	}
	return out
}

// Secrets returns the sensitive values as they may appear in text (a string
// as is, anything else as JSON), longest first, so a log can be scrubbed of
// them.
func (r *Rendered) Secrets() []string {
	seen := map[string]bool{}
	for _, k := range r.Sensitive {
		var s string
		if name, ok := strings.CutPrefix(k, "variables."); ok {
			raw := r.Variables[name]
			if err := json.Unmarshal(raw, &s); err != nil {
				s = string(raw)
			}
		} else {
			s = r.EnvVars[strings.TrimPrefix(k, "env_vars.")]
		}
		if s != "" {
			seen[s] = true
		}
	}
	out := sortedKeys(seen)
	sortByLengthDesc(out)
	return out
}

func sortByLengthDesc(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && len(s[j]) > len(s[j-1]); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
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
		v, secret, ok := c.renderValue(&ps, o, key, tm.EnvVars[name], d, data, nil)
		if !ok {
			continue
		}
		s, isString := v.(string)
		if !isString {
			b, err := json.Marshal(v)
			if err != nil {
				ps.add(o.file, o.prefix+key, "cannot encode the rendered value: %v", err)
				continue
			}
			s = string(b)
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
