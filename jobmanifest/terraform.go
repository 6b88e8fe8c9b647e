package jobmanifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract/status"
)

// Kinds of Error.
const (
	KindInvalidInput  = "InvalidInput"
	KindInvalidConfig = "InvalidConfig"
	KindRender        = "Render"
	KindBadOutput     = "BadOutput" // a step's output a manifest needs is not what it must be
)

// Error is a manifest that cannot be built: Kind says whether the request,
// the config or a template is at fault.
type Error struct {
	Kind string
	Step string
	Err  error
}

func (e *Error) Error() string {
	if e.Kind == KindRender {
		return "render " + e.Step + ": " + e.Err.Error()
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Terraform renders a terraform step's (the sandbox's or a terraform_module
// component's) variables and environment — the environment only, with
// envOnly (a job whose inputs are deferred) — and names its module's source.
func Terraform(cfg *appconfig.Config, data appconfig.Data, step string, envOnly bool) (*appconfig.Rendered, string, error) {
	var (
		rendered *appconfig.Rendered
		err      error
	)
	source := cfg.Sandbox.Source
	switch {
	case step == status.SandboxStep && envOnly:
		return nil, "", &Error{Kind: KindInvalidInput, Step: step, Err: errors.New("the sandbox's inputs cannot be deferred")}
	case step == status.SandboxStep:
		rendered, err = cfg.RenderSandbox(data)
	default:
		c, ok := cfg.Component(step)
		if !ok || c.Terraform == nil {
			return nil, "", &Error{Kind: KindInvalidConfig, Step: step, Err: fmt.Errorf("no terraform component %s in the app config", step)}
		}
		source = c.Terraform.Source
		if envOnly {
			rendered, err = cfg.RenderComponentEnv(step, data)
		} else {
			rendered, err = cfg.RenderComponent(step, data)
		}
	}
	if err != nil {
		return nil, "", &Error{Kind: KindRender, Step: step, Err: err}
	}
	return rendered, source, nil
}

// Scrub is what a job's runner scrubs from its logs and plans: the
// install's sensitive values, and the job's sensitive variables as
// rendered.
func Scrub(data appconfig.Data, rendered *appconfig.Rendered) []string {
	out := append(data.Sensitive(), rendered.Secrets()...)
	slices.Sort(out)
	return slices.Compact(out)
}

// Variables moves TF_VAR_<name> environment variables into the variables
// (terraform-exec passes variables itself and refuses them in the
// environment). A variable set directly wins, as it would in terraform.
func Variables(vars map[string]json.RawMessage, env map[string]string) (map[string]json.RawMessage, map[string]string) {
	outVars := map[string]json.RawMessage{}
	for k, v := range vars {
		outVars[k] = v
	}
	outEnv := map[string]string{}
	for k, v := range env {
		name, ok := strings.CutPrefix(k, "TF_VAR_")
		if !ok {
			outEnv[k] = v
			continue
		}
		if _, set := outVars[name]; !set {
			b, _ := json.Marshal(v)
			outVars[name] = b
		}
	}
	return outVars, outEnv
}
