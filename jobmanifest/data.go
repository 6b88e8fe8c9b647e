package jobmanifest

import (
	"encoding/json"
	"fmt"
	"maps"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
)

// Install is what templates and policies read of an install beyond its
// outputs.
type Install struct {
	ID, Name string
	Labels   map[string]string
	// Inputs are the given values, by name; Sensitive says which are.
	Inputs    map[string]string
	Sensitive map[string]bool
}

// Data gathers what templates may read: the install's inputs, resolved
// against the config's, and the outputs its sandbox and components have
// (each as terraform's outputs are recorded, protocol.TerraformApplyOutputs
// JSON, by step name). Action outputs are the caller's to add.
func Data(cfg *appconfig.Config, inst Install, outputs map[string]string) (appconfig.Data, error) {
	inputs, err := cfg.ResolveInputs(inst.Inputs, inst.Sensitive)
	if err != nil {
		return appconfig.Data{}, &Error{Kind: KindRender, Step: "inputs", Err: err}
	}
	d := appconfig.Data{InstallID: inst.ID, InstallName: inst.Name, Inputs: inputs,
		SandboxOutputs: map[string]appconfig.Value{}, Components: map[string]map[string]appconfig.Value{}}
	for name, raw := range outputs {
		var o protocol.TerraformApplyOutputs
		if err := json.Unmarshal([]byte(raw), &o); err != nil {
			return appconfig.Data{}, &Error{Kind: KindRender, Step: name, Err: fmt.Errorf("outputs of %s: %w", name, err)}
		}
		vals, err := appconfig.OutputValues(o.Outputs)
		if err != nil {
			return appconfig.Data{}, &Error{Kind: KindRender, Step: name, Err: err}
		}
		if name == status.SandboxStep {
			d.SandboxOutputs = vals
		} else {
			d.Components[name] = vals
		}
	}
	return d, nil
}

// PlanPolicies are the vendor's plan policies of a step and what the
// install is (registry: the install registry's address, "" when unknown).
func PlanPolicies(cfg *appconfig.Config, inst Install, step, registry string) *protocol.PlanPolicies {
	return &protocol.PlanPolicies{Modules: cfg.Policies(), Step: step,
		Install: protocol.PolicyInstall{ID: inst.ID, Name: inst.Name, Labels: maps.Clone(inst.Labels), Registry: registry}}
}
