package terraform

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-exec/tfexec"
	"github.com/outpost-dev/outpost/planpolicy"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/plugins"
)

// newChecker compiles the job's plan policies: the vendor's from the
// manifest, the customer's from the runner's directory (planpolicy.EnvDir).
func (p *plugin) newChecker(ctx context.Context, env map[string]string) error {
	var vendor []protocol.PolicyModule
	if p.m.Policies != nil {
		vendor = p.m.Policies.Modules
	}
	c, err := planpolicy.NewChecker(ctx, vendor, env[planpolicy.EnvDir])
	if err != nil {
		return err
	}
	p.checker = c
	return nil
}

// checkPlan evaluates the plan's policies on planJSON (terraform show -json,
// redacted), writes what they said to the job's log, and returns the results
// and an error naming each policy that denied the plan.
func (p *plugin) checkPlan(ctx context.Context, run plugins.Run, planJSON []byte) ([]protocol.PolicyResult, error) {
	if p.checker == nil || p.checker.Len() == 0 {
		return nil, nil
	}
	start := time.Now()
	var plan any
	dec := json.NewDecoder(bytes.NewReader(planJSON))
	dec.UseNumber()
	if err := dec.Decode(&plan); err != nil {
		return nil, fmt.Errorf("plan policies: reading the plan's JSON: %w", err)
	}
	in := planpolicy.Input{Kind: planpolicy.KindTerraform, Destroy: p.m.Destroy, Terraform: plan}
	if pp := p.m.Policies; pp != nil {
		in.Install, in.Step = pp.Install, pp.Step
	}
	res := p.checker.Check(ctx, in)
	planpolicy.Report(run.Stdout, res)
	fmt.Fprintf(run.Stdout, "outpost: %d plan policies checked in %s\n", len(res), time.Since(start).Round(time.Millisecond))
	return res, planpolicy.Denied(res)
}

// checkSavedPlan checks a saved plan before it is applied: the plan an
// apply job brings was checked when it was made, but by whom the runner
// cannot tell, so its customer's policies see it again.
func (p *plugin) checkSavedPlan(ctx context.Context, cmd cli, run plugins.Run, path string) ([]protocol.PolicyResult, error) {
	if p.checker == nil || p.checker.Len() == 0 {
		return nil, nil
	}
	var out protocol.TerraformPlanOutputs
	if err := describe(ctx, cmd, path, &out); err != nil {
		return nil, err
	}
	return p.checkPlan(ctx, run, out.PlanJSON)
}

// checkedPlan saves the plan (without the state lock when noLock), describes
// it and checks it against the plan policies.
func (p *plugin) checkedPlan(ctx context.Context, tf *tfexec.Terraform, cmd cli, run plugins.Run, noLock bool) (protocol.TerraformPlanOutputs, string, error) {
	out, path, err := savePlan(ctx, tf, run, p.m.Destroy, noLock)
	if err != nil {
		return out, "", err
	}
	if err := describe(ctx, cmd, path, &out); err != nil {
		return out, "", err
	}
	out.Policies, err = p.checkPlan(ctx, run, out.PlanJSON)
	return out, path, err
}

// planCheckApply is plan_apply when there are plan policies: the plan is
// saved, checked, and applied only when every policy ran and denied nothing.
func (p *plugin) planCheckApply(ctx context.Context, tf *tfexec.Terraform, cmd cli, run plugins.Run) (json.RawMessage, error) {
	out, path, err := p.checkedPlan(ctx, tf, cmd, run, false)
	if err != nil {
		return nil, err
	}
	reportPlan(run, out)
	if out.HasChanges {
		if err := tf.Apply(ctx, tfexec.DirOrPlan(path)); err != nil {
			return nil, failure("apply", err)
		}
	}
	out.PlanJSON = nil // a plan_apply job's outputs carry no JSON
	return p.fitPlanApplyOutputs(out, out.HasChanges)
}
