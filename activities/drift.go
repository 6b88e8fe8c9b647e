package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// driftSteps are a drift check's steps: the sandbox and each terraform,
// helm_chart and container_image component, each planned at once (a check
// applies nothing, so no step waits for another).
func driftSteps(steps []contract.StepSpec) []contract.StepSpec {
	var out []contract.StepSpec
	for _, st := range steps {
		if st.Name != status.SandboxStep && !driftChecked[st.Type] {
			continue
		}
		st.After, st.Prestart, st.PrestartBeforeSandbox = nil, false, false
		out = append(out, st)
	}
	return out
}

// driftChecked are the component types a drift check plans.
var driftChecked = map[string]bool{contract.TypeTerraformModule: true, contract.TypeHelmChart: true, contract.TypeContainerImage: true}

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

// RecordDrift records a drift check's terraform plan job on its step and
// what it found: a plan that is not empty is drift, kept with the plan until
// a later check or an apply of the step clears it.
func (a *Activities) RecordDrift(ctx context.Context, opID, step, jobID string) (contract.PlanSummary, error) {
	return a.recordDrift(ctx, opID, step, jobID, a.RecordPlan)
}

// RecordHelmDrift is RecordDrift for a helm_chart's plan job: a chart
// drifts when its objects were changed in the cluster (or its chart or
// values would change them).
func (a *Activities) RecordHelmDrift(ctx context.Context, opID, step, jobID string) (contract.PlanSummary, error) {
	return a.recordDrift(ctx, opID, step, jobID, a.RecordHelmPlan)
}

// RecordImageDrift is RecordDrift for a container_image's sync_plan job: an
// image drifts when the install's registry no longer holds it whole.
func (a *Activities) RecordImageDrift(ctx context.Context, opID, step, jobID string) (contract.PlanSummary, error) {
	return a.recordDrift(ctx, opID, step, jobID, a.RecordSyncPlan)
}

func (a *Activities) recordDrift(ctx context.Context, opID, step, jobID string,
	record func(ctx context.Context, opID, step, jobID string) (contract.PlanSummary, error)) (_ contract.PlanSummary, err error) {
	defer classified(&err)
	s, err := record(ctx, opID, step, jobID)
	if err != nil || s.Failed {
		return s, err
	}
	op, st, err := a.stepOf(ctx, opID, step)
	if err != nil {
		return s, err
	}
	return s, a.Store.RecordDrift(ctx, op.InstallID, step, opID, op.CreatedAt, s.HasChanges, st.PlanText)
}

// BeginDriftReconcile records a reconcile_drift of the install for the drift
// check opID (its TriggeredBy), taking the install's lock. It starts none
// when nothing the check found drifted still is (an apply cleared it
// meanwhile), when the install no longer reconciles drift under
// approve-all, or when another operation holds the install (NotStarted says
// why; the next check finds the drift again).
func (a *Activities) BeginDriftReconcile(ctx context.Context, opID string) (_ contract.Reconcile, err error) {
	defer classified(&err)
	check, err := a.Store.GetOperationByID(ctx, opID)
	if err != nil {
		return contract.Reconcile{}, err
	}
	inst, err := a.Store.GetInstallByID(ctx, check.InstallID)
	if err != nil {
		return contract.Reconcile{}, err
	}
	if !inst.DriftReconcile || inst.ApprovalMode != status.ApproveAll {
		return contract.Reconcile{NotStarted: "drift not reconciled: the install no longer reconciles drift under approve-all"}, nil
	}
	drifted, err := a.stillDrifted(ctx, check)
	if err != nil || len(drifted) == 0 {
		return contract.Reconcile{NotStarted: "drift not reconciled: an apply cleared it before the reconcile"}, err
	}
	op, err := a.Store.StartOperation(ctx, store.InstallOperation{OrgID: inst.OrgID, InstallID: inst.ID, Kind: store.OpReconcileDrift,
		ApprovalMode: inst.ApprovalMode, ConfigVersion: inst.ConfigVersion, TriggeredBy: check.ID,
		WorkflowID: contract.OperationWorkflowID(inst.ID, contract.OpReconcileDrift, "")})
	if errors.Is(err, store.ErrConflict) {
		return contract.Reconcile{NotStarted: "drift not reconciled: " + err.Error()}, nil
	}
	return contract.Reconcile{OperationID: op.ID, WorkflowID: op.WorkflowID}, err
}

// planReconcile marks a reconcile_drift's steps as an update_inputs marks
// its own (markChanged), with the steps its drift check found drifted, and
// that no apply has cleared since, as the changed ones: whatever their kind.
func (a *Activities) planReconcile(ctx context.Context, op store.InstallOperation, steps []contract.StepSpec) error {
	check, err := a.Store.GetOperationByID(ctx, op.TriggeredBy)
	if err != nil {
		return fmt.Errorf("the reconcile's drift check: %w", err)
	}
	drifted, err := a.stillDrifted(ctx, check)
	if err != nil {
		return err
	}
	markChanged(steps, drifted)
	return nil
}

// stillDrifted are the steps the drift check found drifted whose drift is
// still recorded (no apply cleared it since).
func (a *Activities) stillDrifted(ctx context.Context, check store.InstallOperation) (map[string]bool, error) {
	op, err := a.Store.GetOperation(ctx, check.OrgID, check.ID)
	if err != nil {
		return nil, err
	}
	rows, err := a.Store.ListDrift(ctx, check.InstallID)
	if err != nil {
		return nil, err
	}
	recorded := map[string]bool{}
	for _, r := range rows {
		recorded[r.Name] = r.Drifted
	}
	out := map[string]bool{}
	for _, st := range op.Steps {
		if st.Status == status.StepDrifted && recorded[st.Name] {
			out[st.Name] = true
		}
	}
	return out, nil
}

// EnqueueSyncPlanJob queues, on the install's runner, the plan of a sync of
// the build a container_image component runs: does the install's registry
// still hold it whole? The job reads only that registry (the control plane
// cannot reach it; the sync it plans would copy from the vendor's).
func (a *Activities) EnqueueSyncPlanJob(ctx context.Context, in contract.SyncJobInput) (_ contract.JobRef, err error) {
	defer classified(&err)
	op, err := a.Store.GetOperationByID(ctx, in.OperationID)
	if err != nil {
		return contract.JobRef{}, err
	}
	ics, err := a.Store.ListInstallComponents(ctx, op.InstallID)
	if err != nil {
		return contract.JobRef{}, err
	}
	i := slices.IndexFunc(ics, func(ic store.InstallComponent) bool { return ic.Component == in.Step })
	if i < 0 {
		return contract.JobRef{}, nonRetryable("drift check", fmt.Errorf("the install runs no build of %s: deploy it first", in.Step))
	}
	src, dst, err := a.syncEnds(ctx, op.InstallID, ics[i].BuildID, true)
	if err != nil {
		return contract.JobRef{}, err
	}
	m := protocol.OCIManifest{Operation: protocol.OCISyncPlan, Artifact: &src, Destination: dst}
	spec := store.JobSpec{Key: in.Key, Type: protocol.JobTypeOCI, TimeoutMS: buildJobTimeout.Milliseconds()}
	return a.enqueueStepJob(ctx, op, in.Step, spec, m, func(jobID string) store.StepChange {
		return store.StepChange{Status: new(status.StepPlanning), StartedAt: new(time.Now().UTC()), PlanJobID: &jobID}
	})
}

// RecordSyncPlan stores a sync_plan job's result on its step as a plan:
// what the install's registry lacks of the image.
func (a *Activities) RecordSyncPlan(ctx context.Context, opID, step, jobID string) (_ contract.PlanSummary, err error) {
	defer classified(&err)
	var out protocol.OCISyncPlanOutputs
	if failed, err := a.jobOutputs(ctx, opID, step, jobID, &out); err != nil || failed != "" {
		return contract.PlanSummary{Failed: failed != "", Error: failed}, err
	}
	return a.recordPlan(ctx, opID, step, protocol.TerraformPlanOutputs{HasChanges: out.HasChanges, PlanText: out.Plan, Add: len(out.Missing)})
}
