package appconfig

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// The keys of a runbooks/<name>.toml.
var (
	runbookFields = []field{
		{key: "description", kind: kString},
		{key: "inputs", kind: kTableList, fields: inputFields},
		{key: "steps", kind: kTableList, required: true, fields: runbookStepFields},
	}
	runbookStepFields = []field{
		{key: "name", kind: kString, required: true},
		{key: "type", kind: kString, required: true},
		{key: "action", kind: kString},
		{key: "component", kind: kString},
		{key: "inputs", kind: kStringMap},
		{key: "description", kind: kString},
	}
)

// readRunbooks reads runbooks/*.toml. The actions and components steps
// name are checked later (checkRunbooks), once both are known.
func (c *Config) readRunbooks(ps *problems) {
	c.eachTOML(ps, RunbooksDir, func(file string, raw map[string]any) {
		m := checkTable(ps, file, "", raw, runbookFields)
		r := &Runbook{Name: strings.TrimSuffix(path.Base(file), ".toml"), File: file, Inputs: []Input{}, Steps: []RunbookStep{}}
		if !nameRE.MatchString(r.Name) {
			ps.add(file, "", "runbook name %q (the file's name) %s", r.Name, nameRule)
			return
		}
		r.Description, _ = m["description"].(string)
		inputs, _ := m["inputs"].([]map[string]any)
		r.Inputs, _ = readInputs(ps, file, "inputs", inputs)
		if r.Inputs == nil {
			r.Inputs = []Input{}
		}
		if steps, ok := m["steps"].([]map[string]any); ok {
			if len(steps) == 0 {
				ps.add(file, "steps", "a runbook needs at least one step ([[steps]] with a name and a type: %s)", strings.Join(RunbookStepKinds, ", "))
			}
			for i, st := range steps {
				if s, ok := readRunbookStep(ps, file, fmt.Sprintf("steps[%d].", i), st, r.Steps); ok {
					r.Steps = append(r.Steps, s)
				}
			}
		}
		c.Runbooks = append(c.Runbooks, r)
	})
}

// readRunbookStep reads one [[steps]] entry; key is its prefix
// ("steps[0].") and before the steps read so far.
func readRunbookStep(ps *problems, file, key string, m map[string]any, before []RunbookStep) (RunbookStep, bool) {
	s := RunbookStep{}
	s.Name, _ = m["name"].(string)
	s.Kind, _ = m["type"].(string)
	s.Action, _ = m["action"].(string)
	s.Component, _ = m["component"].(string)
	s.Description, _ = m["description"].(string)
	s.Inputs, _ = m["inputs"].(map[string]string)
	ok := stepNameOK(ps, file, key, m, slices.ContainsFunc(before, func(b RunbookStep) bool { return b.Name == s.Name }))
	if _, typed := m["type"]; !typed {
		return s, false
	}
	if !slices.Contains(RunbookStepKinds, s.Kind) {
		ps.add(file, key+"type", "unknown step type %q (one of %s)", s.Kind, strings.Join(RunbookStepKinds, ", "))
		return s, false
	}
	// only refuses a key given to a step type that does not take it.
	only := func(k, kind string) {
		if _, given := m[k]; given && s.Kind != kind {
			ps.add(file, key+k, "only an %s step takes %s (this step's type is %s)", kind, k, s.Kind)
			ok = false
		}
	}
	only("action", StepAction)
	only("inputs", StepAction)
	if _, given := m["component"]; given && s.Kind != StepDeploy {
		ps.add(file, key+"component", "only a deploy step takes component (this step's type is %s)", s.Kind)
		ok = false
	}
	switch {
	case s.Kind == StepAction && s.Action == "":
		ps.add(file, key+"action", "an action step needs the action it runs (the name of an actions/<name>.toml)")
		ok = false
	case s.Kind == StepDeploy && s.Component == "":
		ps.add(file, key+"component", "a deploy step needs the component it deploys")
		ok = false
	}
	return s, ok
}

// checkRunbooks checks what steps name: actions and their inputs, and
// components.
func (c *Config) checkRunbooks(ps *problems) {
	for _, r := range c.Runbooks {
		for i, s := range r.Steps {
			key := fmt.Sprintf("steps[%d].", i)
			switch s.Kind {
			case StepDeploy:
				if _, ok := c.byName[s.Component]; !ok {
					ps.add(r.File, key+"component", "no component %q (components: %s)", s.Component, quotedList(c.ComponentNames()))
				}
			case StepAction:
				c.checkActionStep(ps, r, key, s)
			}
		}
	}
}

// checkActionStep checks an action step: its action exists, every input
// the step sets is one of the action's and parses as its type, a runbook
// input passed to the action by name has the action's type, and every
// input the action requires is given.
func (c *Config) checkActionStep(ps *problems, r *Runbook, key string, s RunbookStep) {
	act, ok := c.Action(s.Action)
	if !ok {
		ps.add(r.File, key+"action", "no action %q (actions: %s)", s.Action, quotedList(c.ActionNames()))
		return
	}
	for _, name := range sortedKeys(s.Inputs) {
		decl, ok := act.input(name)
		if !ok {
			ps.add(r.File, key+"inputs."+name, "action %q has no input %q (inputs: %s)", act.Name, name, quotedList(act.InputNames()))
			continue
		}
		if _, err := ParseInput(decl.Type, s.Inputs[name]); err != nil {
			ps.add(r.File, key+"inputs."+name, "action %q takes input %q as a %s: %v", act.Name, name, decl.Type, err)
		}
	}
	for _, decl := range act.Inputs {
		if _, set := s.Inputs[decl.Name]; set {
			continue
		}
		j := slices.IndexFunc(r.Inputs, func(in Input) bool { return in.Name == decl.Name })
		switch {
		case j >= 0 && r.Inputs[j].Type != decl.Type:
			ps.add(r.File, fmt.Sprintf("inputs[%d].type", j), "input %q is a %s, but action %q (%saction) takes it as a %s",
				decl.Name, r.Inputs[j].Type, act.Name, key, decl.Type)
		case j < 0 && decl.Required:
			ps.add(r.File, key+"inputs", "action %q requires input %q: set it here or declare a runbook input %q", act.Name, decl.Name, decl.Name)
		}
	}
}
