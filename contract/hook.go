package contract

import "strings"

// HookStepName is the name of a hook's step in an operation: trigger
// ("before" or "after") and action, then the component's step for a
// component's hook: "before:migrate", "after:warm-cache:api".
func HookStepName(trigger, action, component string) string {
	name := trigger + ":" + action
	if component != "" {
		name += ":" + component
	}
	return name
}

// ParseHookStep reads a hook step's trigger and action from its name
// (ok false: the step is not a hook's).
func ParseHookStep(name string) (trigger, action string, ok bool) {
	trigger, rest, found := strings.Cut(name, ":")
	if !found || (trigger != "before" && trigger != "after") {
		return "", "", false
	}
	action, _, _ = strings.Cut(rest, ":")
	return trigger, action, action != ""
}
