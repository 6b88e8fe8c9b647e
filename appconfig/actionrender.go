package appconfig

import (
	"fmt"
	"slices"
)

// input returns an input of the action by name.
func (a *Action) input(name string) (Input, bool) {
	return byName(a.Inputs, name)
}

// InputNames lists the action's inputs' names, in file order.
func (a *Action) InputNames() []string {
	return namesOf(a.Inputs)
}

// CheckRunInputs turns the inputs a run is given (name → value as
// ParseInput reads it, e.g. from `--input k=v`) into typed values: every
// declared input, with its default or its type's zero value when optional
// and not given. The error is Problems with keys "inputs.<name>": an input
// the action does not declare, a required one not given, a value of the
// wrong type.
func (a *Action) CheckRunInputs(in map[string]string) (map[string]any, error) {
	return checkRunInputs(fmt.Sprintf("action %q", a.Name), a.Inputs, in)
}

// checkRunInputs checks in against decls, the inputs of what (`action
// "migrate"`); see Action.CheckRunInputs.
func checkRunInputs(what string, decls []Input, in map[string]string) (map[string]any, error) {
	var ps problems
	names := namesOf(decls)
	for _, name := range sortedKeys(in) {
		if !slices.Contains(names, name) {
			ps.add("", "inputs."+name, "%s has no input %q (inputs: %s)", what, name, quotedList(names))
		}
	}
	out := make(map[string]any, len(decls))
	for _, decl := range decls {
		if v, ok := decl.resolve(&ps, in); ok {
			out[decl.Name] = v
		}
	}
	if err := ps.err(); err != nil {
		return nil, err
	}
	return out, nil
}

// RenderActionEnv renders an action's env_vars with d, as a component's,
// and runInputs (CheckRunInputs' answer) as .action.inputs. A value that
// reads a sensitive input or output is listed in Sensitive
// ("env_vars.<NAME>"); Variables is empty. Errors are Problems.
func (c *Config) RenderActionEnv(name string, d Data, runInputs map[string]any) (*Rendered, error) {
	a, ok := c.Action(name)
	if !ok {
		return nil, fmt.Errorf("appconfig: no action %q", name)
	}
	d.actionInputs = make(map[string]Value, len(runInputs))
	for k, v := range runInputs {
		decl, _ := a.input(k)
		d.actionInputs[k] = Value{Value: v, Sensitive: decl.Sensitive}
	}
	return c.render(owner{file: a.File, action: a}, &TerraformModule{EnvVars: a.EnvVars}, d)
}
