package appconfig

import (
	"fmt"
	"slices"
	"strings"

	"github.com/outpost-dev/outpost/contract"
)

// checkHookInputs checks the inputs each hook trigger of a gives its action:
// each an input the action declares, a literal value of its type, a
// template that reads what an action's templates may (not .action.inputs:
// the run's inputs are what it makes), and every required input without a
// default given.
func (c *Config) checkHookInputs(ps *problems, a *Action) {
	for i, t := range a.Triggers {
		if t.Type != TriggerBefore && t.Type != TriggerAfter {
			continue
		}
		prefix := fmt.Sprintf("triggers[%d].", i)
		var settings []templated
		for _, name := range sortedKeys(t.Inputs) {
			key := prefix + "inputs." + name
			decl, ok := a.input(name)
			switch {
			case !ok && a.badInputs[name]:
				continue
			case !ok:
				ps.add(a.File, key, "action %q has no input %q (inputs: %s)", a.Name, name, quotedList(a.InputNames()))
				continue
			case !strings.Contains(t.Inputs[name], "{{"):
				if _, err := ParseInput(decl.Type, t.Inputs[name]); err != nil {
					ps.add(a.File, key, "input %q is a %s: %v", name, decl.Type, err)
				}
			}
			settings = append(settings, templated{"inputs." + name, t.Inputs[name]})
		}
		for _, decl := range a.Inputs {
			if _, given := t.Inputs[decl.Name]; decl.Required && decl.Default == nil && !given {
				ps.add(a.File, prefix+"inputs", "action %q requires input %q: a hook gives it here (inputs = { %s = \"…\" })", a.Name, decl.Name, decl.Name)
			}
		}
		c.checkTemplates(ps, owner{file: a.File, prefix: prefix, action: a, hook: true}, settings)
	}
}

// HookTrigger finds the trigger of a that made an operation's hook step:
// its type ("before" or "after"), the operation's kind, and the component
// the hook surrounds ("" for the operation's own hook). A component's
// deploy and teardown hooks of one type share a step name: the teardown's
// is taken in a deprovision or teardown_component, the deploy's otherwise,
// whichever the action has when it has one only.
func (a *Action) HookTrigger(typ, kind, component string) (int, bool) {
	want := kind
	if component != "" {
		want = contract.OpDeployComponent
		if kind == contract.OpDeprovision || kind == contract.OpTeardownComponent {
			want = contract.OpTeardownComponent
		}
	}
	match := func(t Trigger) bool { return t.Type == typ && t.Component == component }
	if i := slices.IndexFunc(a.Triggers, func(t Trigger) bool { return match(t) && t.Operation == want }); i >= 0 {
		return i, true
	}
	i := slices.IndexFunc(a.Triggers, func(t Trigger) bool {
		return match(t) && component != "" && slices.Contains(HookComponentOperations, t.Operation)
	})
	return i, i >= 0
}

// RenderHookInputs renders the inputs trigger (an index of the action's
// Triggers) gives the action, with d, as ParseInput reads them (a value
// that is not a string as JSON): plain ones, and sensitive ones (the
// action declares the input sensitive or its template reads a sensitive
// value). Errors are Problems at "triggers[i].inputs.<name>".
func (c *Config) RenderHookInputs(action string, trigger int, d Data) (plain, sensitive map[string]string, err error) {
	a, ok := c.Action(action)
	if !ok || trigger < 0 || trigger >= len(a.Triggers) {
		return nil, nil, fmt.Errorf("appconfig: no trigger %d of action %q", trigger, action)
	}
	var ps problems
	o := owner{file: a.File, prefix: fmt.Sprintf("triggers[%d].", trigger), action: a, hook: true}
	data := d.templateData()
	plain, sensitive = map[string]string{}, map[string]string{}
	inputs := a.Triggers[trigger].Inputs
	for _, name := range sortedKeys(inputs) {
		key := "inputs." + name
		s, secret, ok := c.renderText(&ps, o, key, inputs[name], d, data)
		if !ok {
			continue
		}
		if decl, _ := a.input(name); secret || decl.Sensitive {
			sensitive[name] = s
		} else {
			plain[name] = s
		}
	}
	if err := ps.err(); err != nil {
		return nil, nil, err
	}
	return plain, sensitive, nil
}
