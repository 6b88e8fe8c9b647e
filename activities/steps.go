package activities

import (
	"context"
	"time"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// stepsStore is what recording a step's status reads and writes of the
// store.
type stepsStore interface {
	GetOperationByID(ctx context.Context, opID string) (store.InstallOperation, error)
	GetStep(ctx context.Context, opID, name string) (store.InstallStep, error)
	UpdateStep(ctx context.Context, opID, name string, change store.StepChange) error
	StepDecision(ctx context.Context, opID, name string) (status.Decision, error)
	AppliedRenders(ctx context.Context, installID string) (map[string]string, error)
	SetAppliedRender(ctx context.Context, r store.AppliedRender) error
	DeleteAppliedRender(ctx context.Context, installID, name string) error
	ClearDrift(ctx context.Context, installID, name, opID string) error
}

// Steps are the activities that record a step's status, and say whether a
// step after a changed one renders differently (update_inputs and the
// operations that run only what changed).
type Steps struct {
	store  stepsStore
	render *renderer
	events *events
}

// SetStepStatus records a step's status (and error), stamping its times.
// A step that ends well records what it rendered as what the install's step
// is applied with (AppliedRender), and no longer drifts. A step waiting for
// approval, or failed by plan policies, is an event.
func (a *Steps) SetStepStatus(ctx context.Context, opID, step string, stepStatus status.Step, errMsg string) error {
	now := time.Now().UTC()
	change := store.StepChange{Status: &stepStatus, Error: &errMsg}
	if stepStatus == status.StepSucceeded || stepStatus == status.StepNoChanges {
		if err := a.recordAppliedRender(ctx, opID, step); err != nil {
			return err
		}
	}
	switch stepStatus {
	case status.StepPlanning:
		change.StartedAt = &now
	case status.StepApplying: // a step with no plan (a hook's action) starts here
		st, err := a.store.GetStep(ctx, opID, step)
		if err != nil {
			return err
		}
		if st.StartedAt == nil {
			change.StartedAt = &now
		}
	case status.StepSucceeded, status.StepNoChanges, status.StepFailed, status.StepSkipped, status.StepDenied,
		status.StepCancelled, status.StepPlanned, status.StepUnchanged, status.StepDrifted:
		change.FinishedAt = &now
	}
	if err := a.store.UpdateStep(ctx, opID, step, change); err != nil {
		return err
	}
	switch stepStatus {
	case status.StepWaitingApproval:
		return a.events.operationEvent(ctx, opID, contract.EventOperationApproval, step, "waits for approval of step "+step)
	case status.StepFailed:
		return a.events.policyDenied(ctx, opID, step, errMsg)
	}
	return nil
}

// recordAppliedRender records, when a step ends well, the digest its plan
// job rendered as the one the install's step is applied with; a destroyed
// step's is forgotten. A plan-only operation changes nothing.
func (a *Steps) recordAppliedRender(ctx context.Context, opID, step string) error {
	op, err := a.store.GetOperationByID(ctx, opID)
	if err != nil || op.PlanOnly {
		return err
	}
	st, err := a.store.GetStep(ctx, opID, step)
	if err != nil {
		return err
	}
	if err := a.store.ClearDrift(ctx, op.InstallID, step, opID); err != nil {
		return err
	}
	if st.Destroy {
		return a.store.DeleteAppliedRender(ctx, op.InstallID, step)
	}
	if st.RenderDigest == "" {
		return nil
	}
	return a.store.SetAppliedRender(ctx, store.AppliedRender{InstallID: op.InstallID, Name: step, Digest: st.RenderDigest, OperationID: opID})
}

// StepRenderChanged says whether an update_inputs step's job renders
// differently now, once the steps it comes after have ended, than when it
// was last applied.
func (a *Steps) StepRenderChanged(ctx context.Context, opID, step string) (bool, error) {
	oc, data, err := a.render.loadStep(ctx, opID, step)
	if err != nil {
		return false, err
	}
	applied, err := a.store.AppliedRenders(ctx, oc.op.InstallID)
	if err != nil {
		return false, err
	}
	digest, err := a.render.renderDigest(ctx, oc, step, data)
	return err != nil || digest != applied[step], nil
}

// StepDecision is the decision the API recorded on a step's plan
// (approved, denied, or "" when none): an
// approval signal is acted on only when it matches one.
func (a *Steps) StepDecision(ctx context.Context, opID, step string) (status.Decision, error) {
	return a.store.StepDecision(ctx, opID, step)
}
