package jobmanifest

import (
	"slices"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
)

// WithHooks adds the lifecycle hooks of the config's actions to an
// operation's steps (docs/architecture/action-runs.md, Hooks):
//   - a component's hooks (deploy_component or teardown_component of C)
//     around C's step when it is planned to run (not Unchanged): a
//     before-hook "before:<action>:<C>" after C's own dependencies and
//     before C; an after-hook "after:<action>:<C>" after C;
//   - the operation's hooks (its kind, no component): "before:<action>"
//     before every other step, "after:<action>" after every other step.
//
// A plan-only operation and a drift check run no hooks.
func WithHooks(kind string, planOnly bool, steps []contract.StepSpec, actions []*appconfig.Action) []contract.StepSpec {
	if planOnly || kind == contract.OpDriftCheck || len(actions) == 0 {
		return steps
	}
	steps = withComponentHooks(steps, actions)
	var before, after []contract.StepSpec
	for _, a := range actions {
		for _, t := range a.Triggers {
			if t.Operation != kind || t.Component != "" || (t.Type != appconfig.TriggerBefore && t.Type != appconfig.TriggerAfter) {
				continue
			}
			h := hookStep(a.Name, "", t)
			if t.Type == appconfig.TriggerBefore && !hasStep(before, h.Name) {
				before = append(before, h)
			} else if t.Type == appconfig.TriggerAfter && !hasStep(after, h.Name) {
				after = append(after, h)
			}
		}
	}
	names := make([]string, 0, len(before)+len(steps))
	for _, b := range before {
		names = append(names, b.Name)
	}
	for i := range steps {
		if h := steps[i].Hook; h == nil || h.Trigger != appconfig.TriggerAfter { // a component's after-hook follows its step
			steps[i].After = append(slices.Clone(steps[i].After), names...)
		}
	}
	all := append(before, steps...)
	for i := range after {
		for _, st := range all {
			after[i].After = append(after[i].After, st.Name)
		}
	}
	return append(all, after...)
}

// withComponentHooks puts each component's before-hooks just before its step
// and its after-hooks just after it.
func withComponentHooks(steps []contract.StepSpec, actions []*appconfig.Action) []contract.StepSpec {
	out := make([]contract.StepSpec, 0, len(steps))
	for _, st := range steps {
		if st.Name == status.SandboxStep || st.Unchanged {
			out = append(out, st)
			continue
		}
		op := contract.OpDeployComponent
		if st.Destroy {
			op = contract.OpTeardownComponent
		}
		var before, after []contract.StepSpec
		for _, a := range actions {
			for _, t := range a.Triggers {
				if t.Operation != op || t.Component != st.Name {
					continue
				}
				h := hookStep(a.Name, st.Name, t)
				switch {
				case t.Type == appconfig.TriggerBefore && !hasStep(before, h.Name):
					h.After = slices.Clone(st.After)
					before = append(before, h)
				case t.Type == appconfig.TriggerAfter && !hasStep(after, h.Name):
					h.After = []string{st.Name}
					after = append(after, h)
				}
			}
		}
		for _, b := range before {
			st.After = append(slices.Clone(st.After), b.Name)
		}
		out = append(append(append(out, before...), st), after...)
	}
	return out
}

// hookStep is the step of action's trigger t (of component's step, or the
// operation's when component is "").
func hookStep(action, component string, t appconfig.Trigger) contract.StepSpec {
	name := contract.HookStepName(t.Type, action, component)
	h := &contract.Hook{Action: action, Trigger: t.Type, Component: component, ContinueOnFailure: t.ContinueOnFailure}
	if t.Type == appconfig.TriggerAfter {
		h.When = t.When
		if h.When == "" {
			h.When = appconfig.WhenSuccess
		}
	}
	return contract.StepSpec{Name: name, Hook: h}
}

func hasStep(steps []contract.StepSpec, name string) bool {
	return slices.ContainsFunc(steps, func(s contract.StepSpec) bool { return s.Name == name })
}
