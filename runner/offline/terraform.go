package offline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/jobmanifest"
	"github.com/outpost-dev/outpost/protocol"
)

// terraform plans and applies a terraform step in one job (plan_apply, as
// an install that approves every plan does), its state in the state
// directory, and records its outputs.
func (d *deployment) terraform(ctx context.Context, st *protocol.OfflineStep, step string) error {
	data, err := d.data()
	if err != nil {
		return err
	}
	rendered, source, err := jobmanifest.Terraform(d.cfg, data, step, false)
	if err != nil {
		return err
	}
	ws := jobmanifest.Workspace(d.inst.ID, step)
	m := protocol.TerraformManifest{Operation: protocol.TerraformPlanApply, Workspace: ws, Backend: d.state.backend(ws),
		Scrub: jobmanifest.Scrub(data, rendered)}
	m.Variables, m.Env = jobmanifest.Variables(rendered.Variables, rendered.EnvVars)
	var registry string
	if d.registry != nil {
		registry = d.registry.Address
	}
	m.Policies = jobmanifest.PlanPolicies(d.cfg, d.inst, step, registry)
	if err := d.module(step, source, &m); err != nil {
		return err
	}
	res, err := d.runJob(ctx, st, protocol.JobTypeTerraform, m)
	if err != nil {
		return err
	}
	var out protocol.TerraformPlanApplyOutputs
	_ = json.Unmarshal(res.Outputs, &out)
	setPolicy(st, out.Plan.Policies)
	if res.Status != protocol.StatusSucceeded {
		return errors.New(res.Error)
	}
	outs, _, err := d.stateOutputs(step)
	if err != nil {
		return err
	}
	d.record(st, step, outs)
	return nil
}

// module is where the step's module comes from: a component's artifact in
// the install's registry (loaded from the bundle by the sync step), else the
// config version's directory, as the control plane does for the sandbox
// and a component without a build.
func (d *deployment) module(step, source string, m *protocol.TerraformManifest) error {
	if _, ok := d.b.artifacts[step]; ok && step != status.SandboxStep {
		var err error
		m.ModuleArtifact, err = d.artifact(step)
		return err
	}
	var err error
	m.Module, err = d.cfg.ModuleArchive(source)
	return err
}

// artifact is where a component's build is in the install's registry: the
// sync step loaded it there from the bundle.
func (d *deployment) artifact(component string) (*protocol.ArtifactRef, error) {
	desc, ok := d.b.artifacts[component]
	switch {
	case !ok:
		return nil, fmt.Errorf("component %s: the bundle holds no build of it", component)
	case d.registry == nil:
		return nil, fmt.Errorf("component %s: its build is in the bundle but the install has no registry", component)
	}
	return &protocol.ArtifactRef{Registry: *d.registry, Repository: jobmanifest.RepositoryPrefix + component, Digest: desc.Digest.String()}, nil
}
