package activities

import (
	"context"
	"maps"
	"strings"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// stepManifest renders step index of a run: the action's env_vars with the
// run's inputs, and OUTPOST_STEP_<STEP>_<KEY> for each output of the steps
// before it. Every sensitive value the env may hold is in Scrub, for the
// runner to mask in the step's log.
func (a *Actions) stepManifest(ctx context.Context, ar actionRun, index int) (protocol.ActionManifest, error) {
	data, err := a.render.renderData(ctx, ar.cfg, ar.inst)
	if err != nil {
		return protocol.ActionManifest{}, err
	}
	typed, err := ar.action.CheckRunInputs(mergedInputs(ar.run.Inputs, ar.run.SensitiveInputs))
	if err != nil {
		return protocol.ActionManifest{}, nonRetryable("action inputs", err)
	}
	rendered, err := ar.cfg.RenderActionEnv(ar.run.Action, data, typed)
	if err != nil {
		return protocol.ActionManifest{}, nonRetryable("render", err)
	}
	env := maps.Clone(rendered.EnvVars)
	if env == nil {
		env = map[string]string{}
	}
	scrub := sensitiveValues(data)
	for name, v := range env {
		if rendered.IsSensitive("env_vars." + name) {
			scrub = append(scrub, v)
		}
	}
	for _, v := range ar.run.SensitiveInputs {
		scrub = append(scrub, v)
	}
	steps, err := a.store.ListActionRunSteps(ctx, ar.run.ID)
	if err != nil {
		return protocol.ActionManifest{}, err
	}
	scrub = append(scrub, stepOutputsEnv(steps[:min(index, len(steps))], env)...)
	step := ar.action.Steps[index]
	return protocol.ActionManifest{Action: ar.run.Action, Step: step.Name, Script: step.ScriptText, ScriptName: step.Script,
		Command: step.Command, Env: env, SensitiveOutputs: ar.action.SensitiveOutputs, Scrub: withoutEmpty(scrub),
		TimeoutMS: int64(ar.action.TimeoutSeconds) * 1000}, nil
}

// stepOutputsEnv adds earlier steps' outputs to env as
// OUTPOST_STEP_<STEP>_<KEY> (upper-cased, other than letters and digits as
// _) and returns the sensitive values among them.
func stepOutputsEnv(steps []store.ActionRunStep, env map[string]string) []string {
	var secret []string
	for _, s := range steps {
		for k, v := range s.Outputs {
			env[StepOutputEnv(s.Name, k)] = v
		}
		for k, v := range s.SensitiveOutputs {
			env[StepOutputEnv(s.Name, k)] = v
			secret = append(secret, v)
		}
	}
	return secret
}

// StepOutputEnv is the variable a later step reads an output of step from.
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
