package appconfig

import (
	"fmt"
	"slices"
	"strings"
	"text/template"
	"text/template/parse"
)

// refHelp names, for error messages, the data templates see.
const refHelp = "templates can use .install.inputs.<name>, .install.id, .install.name, " +
	".sandbox.outputs.<name>, .components.<component>.outputs.<name> and .actions.<action>.outputs.<name>"

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
	refActionInput  // .action.inputs.<name>, in an action's templates
	refActionOutput // .actions.<action>.outputs.<name>: its latest succeeded run's
)

// ref is a checked reference.
type ref struct {
	kind      refKind
	component string // of a refComponentOutput
	action    string // of a refActionOutput
	name      string // the input or output
}

// owner is where templates are: the sandbox, a component or an action.
type owner struct {
	file   string
	prefix string  // of its keys: "sandbox." or ""
	self   *string // the component's name; nil for the sandbox and an action
	action *Action // the action; nil for the sandbox and a component
	hook   bool    // the inputs a hook trigger of action gives it: no .action.inputs
}

// sandbox reports whether the templates are the sandbox's.
func (o owner) sandbox() bool { return o.self == nil && o.action == nil }

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
	case "action":
		return c.classifyAction(o, p)
	case "actions":
		return c.classifyActionOutput(p)
	case "sandbox":
		if o.sandbox() {
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
		if o.sandbox() {
			return r, fmt.Sprintf("%s: the sandbox is provisioned before every component, so it cannot use their outputs", shown)
		}
		if len(p) < 4 || p[2] != "outputs" {
			return r, fmt.Sprintf("%s must name a component output: .components.<component>.outputs.<name>", shown)
		}
		if o.self != nil && p[1] == *o.self {
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
		case cmp.Helm != nil || cmp.Image != nil || cmp.Docker != nil:
			// Their outputs are fixed: strings, a number (revision), a
			// list of strings (objects).
			outs := HelmOutputs
			if cmp.Image != nil || cmp.Docker != nil {
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

// classifyAction checks a reference to the run's inputs of an action.
func (c *Config) classifyAction(o owner, p []string) (ref, string) {
	shown := "." + strings.Join(p, ".")
	if o.action == nil {
		return ref{}, fmt.Sprintf("unknown reference %s: only an action's templates can use .action.inputs.<name>", shown)
	}
	if o.hook {
		return ref{}, fmt.Sprintf("unknown reference %s: a hook's inputs are what makes the run's inputs; use .install, .sandbox, .components or .actions", shown)
	}
	if len(p) != 3 || p[1] != "inputs" {
		return ref{}, fmt.Sprintf("%s must name an input of the action: .action.inputs.<name>", shown)
	}
	if _, ok := o.action.input(p[2]); !ok && !o.action.badInputs[p[2]] {
		return ref{}, fmt.Sprintf("%s: no input %q is declared in %s (inputs: %s)", shown, p[2], o.action.File, quotedList(o.action.InputNames()))
	}
	return ref{kind: refActionInput, name: p[2]}, ""
}

// classifyActionOutput checks a reference to an output of an action's
// latest succeeded run: the action must be in the config; its outputs are
// whatever its steps write, known only once it has run.
func (c *Config) classifyActionOutput(p []string) (ref, string) {
	shown := "." + strings.Join(p, ".")
	if len(p) != 4 || p[2] != "outputs" {
		return ref{}, fmt.Sprintf("%s must name an action output: .actions.<action>.outputs.<name>", shown)
	}
	if _, ok := c.Action(p[1]); !ok && !c.badActions[p[1]] {
		return ref{}, fmt.Sprintf("%s: no action %q (actions: %s)", shown, p[1], quotedList(c.ActionNames()))
	}
	return ref{kind: refActionOutput, action: p[1], name: p[3]}, ""
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
		settings := []templated{{"values", cmp.Helm.Values}}
		if cmp.Helm.Kubeconfig != "" {
			settings = append(settings, templated{"kubeconfig", cmp.Helm.Kubeconfig})
		}
		return settings
	}
	return nil
}

// checkTemplates parses every template of settings, reports bad ones and
// returns the components they reference, each with the first key that does.
func (c *Config) checkTemplates(ps *problems, o owner, settings []templated) map[string]string {
	implied := map[string]string{}
	c.eachRef(ps, o, settings, func(key string, r ref) {
		if r.kind == refActionOutput {
			c.readsActions[r.action] = true
		}
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
