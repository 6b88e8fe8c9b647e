package appconfig

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/protocol"
)

// Action timeouts: each step's, unless the file says otherwise, and the
// most a file may say.
const (
	DefaultActionTimeout = 10 * time.Minute
	MaxActionTimeout     = 2 * time.Hour
)

// HookOperations are the operations a before or after trigger may guard;
// HookComponentOperations those of them that name a component.
var (
	HookOperations = []string{contract.OpProvision, contract.OpDeprovision, contract.OpReprovision,
		contract.OpUpdateInputs, contract.OpDeployConfig, contract.OpDeployComponent, contract.OpTeardownComponent}
	HookComponentOperations = []string{contract.OpDeployComponent, contract.OpTeardownComponent}
	triggerTypes            = []string{TriggerManual, TriggerCron, TriggerBefore, TriggerAfter}
	whens                   = []string{WhenSuccess, WhenFailure, WhenAlways}
)

// The keys of an actions/<name>.toml.
var (
	actionFields = []field{
		{key: "description", kind: kString},
		{key: "timeout", kind: kString},
		{key: "exclusive", kind: kBool},
		{key: "health", kind: kBool},
		{key: "components", kind: kStringList},
		{key: "sensitive_outputs", kind: kStringList},
		{key: "env_vars", kind: kStringMap},
		{key: "inputs", kind: kTableList, fields: inputFields},
		{key: "triggers", kind: kTableList, required: true, fields: triggerFields},
		{key: "steps", kind: kTableList, required: true, fields: stepFields},
	}
	triggerFields = []field{
		{key: "type", kind: kString, required: true},
		{key: "schedule", kind: kString},
		{key: "operation", kind: kString},
		{key: "component", kind: kString},
		{key: "when", kind: kString},
		{key: "continue_on_failure", kind: kBool},
		{key: "inputs", kind: kStringMap},
	}
	stepFields = []field{
		{key: "name", kind: kString, required: true},
		{key: "script", kind: kString},
		{key: "command", kind: kStringList},
	}
)

// cronParser reads a cron trigger's schedule: five fields, or a descriptor
// such as @hourly, as a Temporal schedule's cron string takes them.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Action returns an action by name.
func (c *Config) Action(name string) (*Action, bool) {
	return byName(c.Actions, name)
}

// ActionNames lists the actions' names, sorted.
func (c *Config) ActionNames() []string {
	return namesOf(c.Actions)
}

// readActions reads actions/*.toml. Triggers naming components and
// templates are checked later (checkActions), once components are known.
func (c *Config) readActions(ps *problems) {
	c.eachTOML(ps, ActionsDir, func(file string, raw map[string]any) {
		a := c.readAction(ps, file, checkTable(ps, file, "", raw, actionFields))
		if !nameRE.MatchString(a.Name) {
			ps.add(file, "", "action name %q (the file's name) %s", a.Name, nameRule)
			return
		}
		c.Actions = append(c.Actions, a)
	})
}

// readAction reads one action file's checked keys.
func (c *Config) readAction(ps *problems, file string, m map[string]any) *Action {
	a := &Action{Name: strings.TrimSuffix(path.Base(file), ".toml"), File: file, EnvVars: map[string]string{},
		Inputs: []Input{}, SensitiveOutputs: []string{}, Triggers: []Trigger{}, Steps: []ActionStep{}}
	a.Description, _ = m["description"].(string)
	a.Exclusive, _ = m["exclusive"].(bool)
	a.Health, _ = m["health"].(bool)
	a.Components, _ = m["components"].([]string)
	if _, given := m["components"]; given && !a.Health {
		ps.add(file, "components", "only a health-check action (health = true) names the components it checks")
	}
	a.TimeoutSeconds = int(DefaultActionTimeout / time.Second)
	if s, ok := m["timeout"].(string); ok {
		d, err := time.ParseDuration(s)
		switch {
		case err != nil:
			ps.add(file, "timeout", "%q is not a duration: write a number with a unit, e.g. \"90s\", \"10m\" or \"1h30m\"", s)
		case d < time.Second || d > MaxActionTimeout:
			ps.add(file, "timeout", "%q must be between 1s and %s", s, MaxActionTimeout)
		default:
			a.TimeoutSeconds = int(d.Round(time.Second) / time.Second)
		}
	}
	outs, _ := m["sensitive_outputs"].([]string)
	for i, o := range outs {
		key := fmt.Sprintf("sensitive_outputs[%d]", i)
		switch {
		case !protocol.ValidActionOutputName(o):
			ps.add(file, key, "%q is not an output name (letters, digits and '_', not starting with a digit, at most 128 bytes)", o)
		case slices.Contains(a.SensitiveOutputs, o):
			ps.add(file, key, "%q is listed twice", o)
		default:
			a.SensitiveOutputs = append(a.SensitiveOutputs, o)
		}
	}
	env, _ := m["env_vars"].(map[string]string)
	for _, k := range sortedKeys(env) {
		switch {
		case !protocol.ValidEnvName(k):
			ps.add(file, "env_vars."+k, "%q is not a valid environment variable name (letters, digits and '_', not starting with a digit)", k)
		case k == protocol.EnvActionOutputs:
			ps.add(file, "env_vars."+k, "%s is set by the runner: the path of the file a step writes its outputs to", k)
		case strings.HasPrefix(k, "OUTPOST_"):
			ps.add(file, "env_vars."+k, "%s is set by the runner: OUTPOST_* are its own (OUTPOST_JOB_ID, OUTPOST_OUTPUTS, "+
				"OUTPOST_STEP_<STEP>_<KEY> for earlier steps' outputs); name the variable otherwise", k)
		default:
			a.EnvVars[k] = env[k]
		}
	}
	inputs, _ := m["inputs"].([]map[string]any)
	good, bad := readInputs(ps, file, "inputs", inputs)
	a.Inputs = append(a.Inputs, good...)
	a.badInputs = bad
	if triggers, ok := m["triggers"].([]map[string]any); ok {
		if len(triggers) == 0 {
			ps.add(file, "triggers", "an action needs at least one trigger ([[triggers]] with type %s)", strings.Join(triggerTypes, ", "))
		}
		for i, t := range triggers {
			a.Triggers = append(a.Triggers, readTrigger(ps, file, fmt.Sprintf("triggers[%d].", i), t))
		}
	}
	if steps, ok := m["steps"].([]map[string]any); ok {
		if len(steps) == 0 {
			ps.add(file, "steps", "an action needs at least one step ([[steps]] with a name and a script or a command)")
		}
		for i, st := range steps {
			if s, ok := c.readStep(ps, file, fmt.Sprintf("steps[%d].", i), st, a.Steps); ok {
				a.Steps = append(a.Steps, s)
			}
		}
	}
	return a
}

// readTrigger reads one [[triggers]] entry; key is its prefix
// ("triggers[1].").
func readTrigger(ps *problems, file, key string, m map[string]any) Trigger {
	t := Trigger{}
	t.Type, _ = m["type"].(string)
	t.Schedule, _ = m["schedule"].(string)
	t.Operation, _ = m["operation"].(string)
	t.Component, _ = m["component"].(string)
	t.When, _ = m["when"].(string)
	t.ContinueOnFailure, _ = m["continue_on_failure"].(bool)
	t.Inputs, _ = m["inputs"].(map[string]string)
	_, typed := m["type"]
	if typed && !slices.Contains(triggerTypes, t.Type) {
		ps.add(file, key+"type", "unknown trigger type %q (one of %s)", t.Type, strings.Join(triggerTypes, ", "))
		return t
	}
	// onlyFor refuses a key given to a trigger type that does not take it.
	onlyFor := func(k, what string, types ...string) {
		if _, given := m[k]; given && typed && !slices.Contains(types, t.Type) {
			ps.add(file, key+k, "only %s takes %s, not a %s trigger", what, k, t.Type)
		}
	}
	onlyFor("schedule", "a cron trigger", TriggerCron)
	onlyFor("operation", "a before or after trigger", TriggerBefore, TriggerAfter)
	onlyFor("component", "a before or after trigger", TriggerBefore, TriggerAfter)
	onlyFor("when", "an after trigger", TriggerAfter)
	onlyFor("continue_on_failure", "a before trigger", TriggerBefore)
	onlyFor("inputs", "a before or after trigger", TriggerBefore, TriggerAfter)
	switch t.Type {
	case TriggerCron:
		if _, given := m["schedule"]; !given {
			ps.add(file, key+"schedule", "a cron trigger needs a schedule, e.g. \"*/5 * * * *\"")
		} else if _, err := cronParser.Parse(t.Schedule); err != nil {
			ps.add(file, key+"schedule", "%q is not a cron expression (minute hour day-of-month month day-of-week, e.g. \"*/5 * * * *\"): %v", t.Schedule, err)
		}
	case TriggerBefore, TriggerAfter:
		_, given := m["operation"]
		switch {
		case !given:
			ps.add(file, key+"operation", "a %s trigger needs an operation (one of %s)", t.Type, strings.Join(HookOperations, ", "))
		case !slices.Contains(HookOperations, t.Operation):
			ps.add(file, key+"operation", "unknown operation %q (one of %s)", t.Operation, strings.Join(HookOperations, ", "))
		case slices.Contains(HookComponentOperations, t.Operation) && t.Component == "":
			ps.add(file, key+"component", "a %s hook of %s needs the component it guards", t.Type, t.Operation)
		case !slices.Contains(HookComponentOperations, t.Operation) && t.Component != "":
			ps.add(file, key+"component", "only a hook of %s names a component, not one of %s", strings.Join(HookComponentOperations, " or "), t.Operation)
		}
		if t.Type == TriggerAfter {
			if t.When == "" {
				t.When = WhenSuccess
			} else if !slices.Contains(whens, t.When) {
				ps.add(file, key+"when", "%q is not one of %s", t.When, strings.Join(whens, ", "))
			}
		}
	}
	return t
}

// readStep reads one [[steps]] entry; key is its prefix ("steps[0].") and
// before the steps read so far.
func (c *Config) readStep(ps *problems, file, key string, m map[string]any, before []ActionStep) (ActionStep, bool) {
	s := ActionStep{}
	s.Name, _ = m["name"].(string)
	s.Command, _ = m["command"].([]string)
	script, hasScript := m["script"].(string)
	_, hasCommand := m["command"]
	ok := stepNameOK(ps, file, key, m, slices.ContainsFunc(before, func(b ActionStep) bool { return b.Name == s.Name }))
	switch {
	case hasScript && hasCommand:
		ps.add(file, key+"script", "a step runs a script or a command, not both")
		return s, false
	case !hasScript && !hasCommand:
		ps.add(file, key+"script", "a step needs a script (a file beside the action) or a command")
		return s, false
	case hasCommand && (len(s.Command) == 0 || s.Command[0] == ""):
		ps.add(file, key+"command", "must name a program, e.g. [\"sh\", \"-c\", \"echo hi\"]")
		return s, false
	case hasCommand:
		return s, ok
	}
	clean := path.Join(ActionsDir, script)
	if script == "" || path.IsAbs(script) || strings.Contains(script, `\`) || strings.Contains(script, "://") ||
		clean == ".." || strings.HasPrefix(clean, "../") {
		ps.add(file, key+"script", "%q must name a file of the config relative to %s/, with '/' separators, e.g. \"migrate.sh\"", script, ActionsDir)
		return s, false
	}
	text, err := fs.ReadFile(c.fsys, clean)
	switch {
	case err != nil:
		ps.add(file, key+"script", "cannot read %s: it must be a file of the config (scripts are named relative to %s/)", clean, ActionsDir)
		return s, false
	case len(text) > protocol.MaxActionScriptBytes:
		ps.add(file, key+"script", "%s is %d bytes; a script may be at most %d", clean, len(text), protocol.MaxActionScriptBytes)
		return s, false
	}
	s.Script, s.ScriptText = clean, string(text)
	return s, ok
}

// stepNameOK checks a [[steps]] entry's name (given in m, if at all): an
// identifier, not taken by an earlier step.
func stepNameOK(ps *problems, file, key string, m map[string]any, taken bool) bool {
	name, named := m["name"].(string)
	switch {
	case !named:
		return true
	case !nameRE.MatchString(name):
		ps.add(file, key+"name", "%q %s", name, nameRule)
		return false
	case taken:
		ps.add(file, key+"name", "step %q is already defined", name)
		return false
	}
	return true
}

// checkActions checks what needs the components: the components hooks and
// health checks name and the references of env_vars templates.
func (c *Config) checkActions(ps *problems) {
	checkedBy := map[string]string{} // component → the health action that checks it
	for _, a := range c.Actions {
		c.checkHealthComponents(ps, a, checkedBy)
		for i, t := range a.Triggers {
			if t.Component == "" || !slices.Contains(HookComponentOperations, t.Operation) {
				continue
			}
			if _, ok := c.byName[t.Component]; !ok {
				ps.add(a.File, fmt.Sprintf("triggers[%d].component", i), "no component %q (components: %s)", t.Component, quotedList(c.ComponentNames()))
			}
		}
		var settings []templated
		for _, k := range sortedKeys(a.EnvVars) {
			settings = append(settings, templated{"env_vars." + k, a.EnvVars[k]})
		}
		c.checkTemplates(ps, owner{file: a.File, action: a}, settings)
		c.checkHookInputs(ps, a)
	}
}

// checkHealthComponents checks the components a health action names: each
// a component of the config that is not a helm chart (the runner reads a
// release's health itself), named once, and by no other health action
// (checkedBy, filled in).
func (c *Config) checkHealthComponents(ps *problems, a *Action, checkedBy map[string]string) {
	for i, name := range a.Components {
		key := fmt.Sprintf("components[%d]", i)
		cmp, ok := c.byName[name]
		switch {
		case !ok:
			ps.add(a.File, key, "no component %q (components: %s)", name, quotedList(c.ComponentNames()))
		case cmp.Helm != nil:
			ps.add(a.File, key, "%q is a helm chart: its runner reads its release's health; name a component of another type", name)
		case slices.Contains(a.Components[:i], name):
			ps.add(a.File, key, "%q is named twice", name)
		case checkedBy[name] != "":
			ps.add(a.File, key, "%q is already checked by action %q: a component's health comes from one action", name, checkedBy[name])
		default:
			checkedBy[name] = a.Name
		}
	}
}
