package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// RecordPlan stores a plan job's result on its step.
func (a *Terraform) RecordPlan(ctx context.Context, opID, step, jobID string) (contract.PlanSummary, error) {
	var out protocol.TerraformPlanOutputs
	if failed, err := a.steps.outputs(ctx, opID, step, jobID, &out); err != nil || failed != "" {
		return failedPlan(failed, err)
	}
	return a.installed.recordPlan(ctx, opID, step, out)
}

// RecordPlanApply stores a plan_apply job's result on its step: the plan,
// and, when it was applied, the step's outputs from the state it stored.
func (a *Terraform) RecordPlanApply(ctx context.Context, opID, step, jobID string) (contract.PlanSummary, error) {
	var out protocol.TerraformPlanApplyOutputs
	if failed, err := a.steps.outputs(ctx, opID, step, jobID, &out); err != nil || failed != "" {
		return failedPlan(failed, err)
	}
	if failed, err := a.checkSynced(ctx, opID, step, out.Synced); err != nil || failed != "" {
		return failedPlan(failed, err)
	}
	s, err := a.installed.recordPlan(ctx, opID, step, out.Plan)
	switch {
	case err != nil || out.Plan.HasChanges && !out.Applied:
		return s, err
	case out.Applied:
		s.Applied = true
		return s, a.recordOutputs(ctx, opID, step)
	}
	return s, a.recordUnchangedOutputs(ctx, opID, step)
}

// RecordApply records the step's outputs after its apply job.
func (a *Terraform) RecordApply(ctx context.Context, opID, step, jobID string) (contract.ApplySummary, error) {
	if failed, err := a.steps.outputs(ctx, opID, step, jobID, nil); err != nil || failed != "" {
		return contract.ApplySummary{Failed: failed != "", Error: failed}, err
	}
	return contract.ApplySummary{}, a.recordOutputs(ctx, opID, step)
}

// checkSynced checks a plan_apply job's sync of the step's build (when its
// manifest had one: protocol.TerraformManifest.ModuleSync).
func (a *Terraform) checkSynced(ctx context.Context, opID, step string, synced *protocol.Artifact) (failed string, err error) {
	st, err := a.store.GetStep(ctx, opID, step)
	if err != nil || st.BuildID == nil || st.SyncJobID == nil || st.PlanJobID == nil || *st.SyncJobID != *st.PlanJobID {
		return "", err // not synced by this job
	}
	if synced == nil {
		return a.installed.checkDigest(ctx, opID, step, *st.BuildID, "nothing")
	}
	return a.installed.checkDigest(ctx, opID, step, *st.BuildID, synced.Digest)
}

// recordOutputs stores the outputs in the step's latest state as the
// install's outputs of the step — or, after a destroy, forgets them.
func (a *Terraform) recordOutputs(ctx context.Context, opID, step string) error {
	op, st, err := a.steps.stepOf(ctx, opID, step)
	if err != nil {
		return err
	}
	if st.Destroy {
		// Nothing is left of it: forget its outputs and retire its state
		// (every version is kept for the record; a GET finds none).
		if err := a.installed.forget(ctx, opID, step); err != nil {
			return err
		}
		return a.store.DiscardTerraformState(ctx, op.OrgID, Workspace(op.InstallID, step))
	}
	if err := a.installed.recordDeployedBuild(ctx, opID, op.InstallID, step); err != nil {
		return err
	}
	return a.saveStateOutputs(ctx, op, step)
}

// recordUnchangedOutputs records a step's outputs from its state when its
// plan found nothing to do: an earlier attempt, lost after it applied (its
// completion never delivered), left them there unrecorded. A step with no
// state, or one that destroys, records nothing.
func (a *Terraform) recordUnchangedOutputs(ctx context.Context, opID, step string) error {
	op, st, err := a.steps.stepOf(ctx, opID, step)
	if err != nil || st.Destroy {
		return err
	}
	if err := a.saveStateOutputs(ctx, op, step); !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}

// saveStateOutputs records the outputs in the step's terraform state as the
// install's (store.ErrNotFound when it has no state).
func (a *Terraform) saveStateOutputs(ctx context.Context, op store.InstallOperation, step string) error {
	outputs, err := a.store.TerraformStateOutputs(ctx, op.OrgID, Workspace(op.InstallID, step))
	if err != nil {
		return fmt.Errorf("outputs of %s: %w", step, err)
	}
	raw, err := json.Marshal(protocol.TerraformApplyOutputs{Outputs: outputs})
	if err != nil {
		return err
	}
	return a.store.SaveOutputs(ctx, op.InstallID, step, string(raw))
}
