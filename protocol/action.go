package protocol

// An action is a vendor's script (actions/<name>.toml in the app config),
// run by the install's runner one step at a time: each step is one job of
// JobTypeAction.

// JobTypeAction runs one step of an action (ActionManifest).
const JobTypeAction = "action"

// EnvActionOutputs names the environment variable that holds the path of the
// file a step writes its outputs to: `key=value` lines, or one JSON object
// whose values are strings.
const EnvActionOutputs = "OUTPOST_OUTPUTS"

// Limits of an action step.
const (
	MaxActionScriptBytes  = 256 << 10 // a script's text
	MaxActionOutputsBytes = 64 << 10  // the outputs file a step writes
)

// ActionManifest is one step of an action: a script of the app's config, or
// a command line, run in a clean environment with Env added.
type ActionManifest struct {
	// Action and Step name what runs: the customer's policy may allow only
	// some actions (CustomerPolicy.Actions).
	Action string `json:"action"`
	Step   string `json:"step"`
	// Script is a script's text, run as an executable file (its #! line
	// chooses the interpreter; /bin/sh runs one without); ScriptName is its
	// path in the app config, for logs.
	Script     string `json:"script,omitempty"`
	ScriptName string `json:"script_name,omitempty"`
	// Command is a program and its arguments, when there is no script.
	Command []string `json:"command,omitempty"`
	// Env is the step's rendered environment variables.
	Env map[string]string `json:"env,omitempty"`
	// SensitiveOutputs are the outputs whose values are secrets: masked in
	// the job's log, sealed where they are stored.
	SensitiveOutputs []string `json:"sensitive_outputs,omitempty"`
	// Scrub are the install's sensitive values Env may hold (sensitive
	// inputs, outputs of the sandbox, components and earlier steps): the
	// runner masks each in the step's log, as TerraformManifest.Scrub.
	Scrub []string `json:"scrub,omitempty"`
	// TimeoutMS bounds the step: the runner stops it then as it stops a job
	// at its timeout (SIGTERM to its processes, SIGKILL after a grace).
	TimeoutMS int64 `json:"timeout_ms"`
}

// ValidEnvName: an environment variable's name is a letter or _, then
// letters, digits and _.
func ValidEnvName(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for _, c := range name {
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// ValidActionOutputName: an output's name follows ValidEnvName, at most 128
// bytes (a template reads it as .actions.NAME.outputs.KEY).
func ValidActionOutputName(name string) bool { return len(name) <= 128 && ValidEnvName(name) }

// ActionOutputs is what an action step reports when it ends.
type ActionOutputs struct {
	ExitCode int               `json:"exit_code"`
	Outputs  map[string]string `json:"outputs,omitempty"`
	// OutputsError says why the outputs file could not be read; the step
	// then fails, whatever its exit code.
	OutputsError string `json:"outputs_error,omitempty"`
}
