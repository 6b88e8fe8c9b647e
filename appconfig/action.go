package appconfig

// ActionsDir holds one <name>.toml file per action, with the scripts it runs
// beside it.
const ActionsDir = "actions"

// Trigger types of an action.
const (
	TriggerManual = "manual" // a run someone starts (API, CLI, dashboard)
	TriggerCron   = "cron"   // a Temporal schedule per install
	TriggerBefore = "before" // a hook before an operation or a component's deploy or teardown
	TriggerAfter  = "after"  // a hook after it, When it ended so
)

// When an after-hook runs.
const (
	WhenSuccess = "success"
	WhenFailure = "failure"
	WhenAlways  = "always"
)

// Action is one actions/<name>.toml: steps the install's runner runs, and
// what starts them.
type Action struct {
	Name        string `json:"name"`
	File        string `json:"file"` // "actions/migrate.toml"
	Description string `json:"description,omitempty"`
	// TimeoutSeconds bounds each step.
	TimeoutSeconds int `json:"timeout_seconds"`
	// EnvVars are environment variables for every step, unrendered: their
	// templates see .install, .sandbox, .components and .action.inputs (the
	// run's inputs); see Config.RenderActionEnv.
	EnvVars map[string]string `json:"env_vars"`
	// Inputs are the typed inputs a manual run is given.
	Inputs []Input `json:"inputs"`
	// SensitiveOutputs are outputs whose values are secrets.
	SensitiveOutputs []string     `json:"sensitive_outputs"`
	Triggers         []Trigger    `json:"triggers"`
	Steps            []ActionStep `json:"steps"`
	// Exclusive: a run takes the install's lock, as an operation does.
	Exclusive bool `json:"exclusive"`
	// Health: each run's result is recorded as health
	// (docs/architecture/health.md, "Health-check actions"): of each of
	// Components, or, with none, of the install's check "action:<name>".
	Health     bool     `json:"health"`
	Components []string `json:"components,omitempty"`

	badInputs map[string]bool // declared with a problem: references to them are not checked
}

// ActionStep is one step: a script of the config or a command line.
type ActionStep struct {
	Name string `json:"name"`
	// Script is the script's path, relative to the config's root
	// ("actions/migrate.sh"); ScriptText its text, read at load.
	Script     string   `json:"script,omitempty"`
	ScriptText string   `json:"-"`
	Command    []string `json:"command,omitempty"`
}

// Trigger is one [[triggers]] entry.
type Trigger struct {
	Type string `json:"type"` // one of the Trigger* constants
	// Schedule is a cron expression (TriggerCron).
	Schedule string `json:"schedule,omitempty"`
	// Operation is the operation kind a hook guards (provision, deprovision,
	// reprovision, update_inputs, deploy_config, deploy_component,
	// teardown_component); Component names the component of the last two.
	Operation string `json:"operation,omitempty"`
	Component string `json:"component,omitempty"`
	// When an after-hook runs: WhenSuccess (the default), WhenFailure or
	// WhenAlways.
	When string `json:"when,omitempty"`
	// ContinueOnFailure: a failing before-hook does not stop the operation.
	ContinueOnFailure bool `json:"continue_on_failure,omitempty"`
	// Inputs are what a hook gives its action's inputs: name → template,
	// rendered with the install's data when the hook runs (see
	// Config.RenderHookInputs); the action's other inputs take their defaults.
	Inputs map[string]string `json:"inputs,omitempty"`
}
