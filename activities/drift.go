package activities

import (
	"context"
	"errors"
	"fmt"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/status"
	"github.com/outpost-dev/outpost/store"
)

// driftSteps are a drift check's steps: the sandbox and each terraform
// component, each planned at once (a check applies nothing, so no step
// waits for another; helm charts and images are not checked).
func driftSteps(steps []StepSpec) []StepSpec {
	var out []StepSpec
	for _, st := range steps {
		if st.Name == status.SandboxStep || st.Type == appconfig.TypeTerraformModule {
			st.After, st.Prestart, st.PrestartBeforeSandbox = nil, false, false
			out = append(out, st)
		}
	}
	return out
}

// BeginDriftCheck records a drift check a schedule started (workflow
// workflowID) on what the install runs; a retry finds the one it recorded.
func (a *Activities) BeginDriftCheck(ctx context.Context, installID, workflowID string) (_ string, err error) {
	defer classified(&err)
	if op, err := a.Store.OperationOfWorkflow(ctx, workflowID); err == nil {
		return op.ID, nil
	}
	inst, err := a.Store.GetInstallByID(ctx, installID)
	if err != nil {
		return "", err
	}
	if inst.ConfigVersion == 0 {
		return "", nonRetryable("drift check", fmt.Errorf("install %s runs nothing yet: provision it first", inst.Name))
	}
	op, err := a.Store.StartOperation(ctx, store.InstallOperation{OrgID: inst.OrgID, InstallID: inst.ID, Kind: store.OpDriftCheck,
		PlanOnly: true, ApprovalMode: inst.ApprovalMode, ConfigVersion: inst.ConfigVersion, WorkflowID: workflowID})
	return op.ID, err
}

// RecordDrift records a drift check's plan job on its step and what it
// found: a plan that is not empty is drift, kept with the plan until a
// later check or an apply of the step clears it.
func (a *Activities) RecordDrift(ctx context.Context, opID, step, jobID string) (_ PlanSummary, err error) {
	defer classified(&err)
	s, err := a.RecordPlan(ctx, opID, step, jobID)
	if err != nil || s.Failed {
		return s, err
	}
	op, st, err := a.stepOf(ctx, opID, step)
	if err != nil {
		return s, err
	}
	return s, a.Store.RecordDrift(ctx, op.InstallID, step, opID, op.CreatedAt, s.HasChanges, st.PlanText)
}

// Reconcile is the operation a drift check started to apply the drift it
// found, or why it started none.
type Reconcile struct {
	OperationID, WorkflowID string
	NotStarted              string
}

// BeginDriftReconcile records a reprovision of the install (which applies
// every plan that is not empty) for the drift check opID, taking the
// install's lock; an install busy with another operation is not reconciled
// now (NotStarted says why; the next check finds the drift again).
func (a *Activities) BeginDriftReconcile(ctx context.Context, opID string) (_ Reconcile, err error) {
	defer classified(&err)
	check, err := a.Store.GetOperationByID(ctx, opID)
	if err != nil {
		return Reconcile{}, err
	}
	inst, err := a.Store.GetInstallByID(ctx, check.InstallID)
	if err != nil {
		return Reconcile{}, err
	}
	op, err := a.Store.StartOperation(ctx, store.InstallOperation{OrgID: inst.OrgID, InstallID: inst.ID, Kind: store.OpReprovision,
		ApprovalMode: inst.ApprovalMode, ConfigVersion: inst.ConfigVersion, WorkflowID: "install/" + inst.ID + "/" + store.OpReprovision})
	if errors.Is(err, store.ErrConflict) {
		return Reconcile{NotStarted: "drift not reconciled: " + err.Error()}, nil
	}
	return Reconcile{OperationID: op.ID, WorkflowID: op.WorkflowID}, err
}
