package jobmanifest

import (
	"maps"
	"strings"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/protocol"
)

// ActionRun is what an action run's step manifest is rendered from.
type ActionRun struct {
	Action string
	// Inputs are the run's typed inputs (Action.CheckRunInputs' answer);
	// SensitiveInputs the values of its sensitive ones.
	Inputs          map[string]any
	SensitiveInputs []string
	// Earlier are the outputs of the run's steps before this one.
	Earlier []ActionStepOutputs
	// Scrub are the install's sensitive values the env may hold.
	Scrub []string
}

// ActionStepOutputs are one finished step's outputs, the sensitive apart.
type ActionStepOutputs struct {
	Step               string
	Outputs, Sensitive map[string]string
}

// ActionStep renders step index of a run: the action's env_vars with the
// run's inputs, and OUTPOST_STEP_<STEP>_<KEY> for each output of the steps
// before it. Every sensitive value the env may hold is in Scrub, for the
// runner to mask in the step's log. An error is the render's (Problems).
func ActionStep(cfg *appconfig.Config, data appconfig.Data, run ActionRun, index int) (protocol.ActionManifest, error) {
	act, _ := cfg.Action(run.Action)
	rendered, err := cfg.RenderActionEnv(run.Action, data, run.Inputs)
	if err != nil {
		return protocol.ActionManifest{}, err
	}
	env := maps.Clone(rendered.EnvVars)
	if env == nil {
		env = map[string]string{}
	}
	scrub := append(append([]string(nil), run.Scrub...), run.SensitiveInputs...)
	for name, v := range env {
		if rendered.IsSensitive("env_vars." + name) {
			scrub = append(scrub, v)
		}
	}
	for _, s := range run.Earlier {
		for k, v := range s.Outputs {
			env[StepOutputEnv(s.Step, k)] = v
		}
		for k, v := range s.Sensitive {
			env[StepOutputEnv(s.Step, k)] = v
			scrub = append(scrub, v)
		}
	}
	step := act.Steps[index]
	return protocol.ActionManifest{Action: run.Action, Step: step.Name, Script: step.ScriptText, ScriptName: step.Script,
		Command: step.Command, Env: env, SensitiveOutputs: act.SensitiveOutputs, Scrub: withoutEmpty(scrub),
		TimeoutMS: int64(act.TimeoutSeconds) * 1000}, nil
}

// StepOutputEnv is the variable a later step reads an output of step from:
// OUTPOST_STEP_<STEP>_<KEY>, upper-cased, other than letters and digits as _.
func StepOutputEnv(step, key string) string {
	return "OUTPOST_STEP_" + envWord(step) + "_" + envWord(key)
}

func envWord(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, s)
}

// withoutEmpty drops empty values (nothing to mask).
func withoutEmpty(vs []string) []string {
	var out []string
	for _, v := range vs {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}
