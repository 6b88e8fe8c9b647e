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

// driftStore is what the drift activities read and write of the store
// beyond the helpers'.
type driftStore interface {
	GetOperationByID(ctx context.Context, opID string) (store.InstallOperation, error)
	OperationOfWorkflow(ctx context.Context, workflowID string) (store.InstallOperation, error)
	GetInstallByID(ctx context.Context, id string) (store.Install, error)
	ListInstallComponents(ctx context.Context, installID string) ([]store.InstallComponent, error)
	StartOperation(ctx context.Context, op store.InstallOperation) (store.InstallOperation, error)
	RecordDrift(ctx context.Context, installID, name, opID string, began time.Time, drifted bool, plan string) error
}

// Drift are the activities of a drift check (a plan of what the install
// runs, without its locks) and of the reconcile it may start. A check
// plans each step as its kind does: a terraform plan (Terraform), a chart's
// plan (Helm), an image's sync plan.
type Drift struct {
	store     driftStore
	plan      *planner
	steps     *stepJobs
	artifacts *artifacts
	installed *installed
	terraform *Terraform
	helm      *Helm
	events    *events
}

// BeginDriftCheck records a drift check a schedule started (workflow
// workflowID) on what the install runs; a retry finds the one it recorded.
func (a *Drift) BeginDriftCheck(ctx context.Context, installID, workflowID string) (string, error) {
	if op, err := a.store.OperationOfWorkflow(ctx, workflowID); err == nil {
		return op.ID, nil
	}
	inst, err := a.store.GetInstallByID(ctx, installID)
	if err != nil {
		return "", err
	}
	if inst.ConfigVersion == 0 {
		return "", nonRetryable("drift check", fmt.Errorf("install %s runs nothing yet: provision it first", inst.Name))
	}
	op, err := a.store.StartOperation(ctx, store.InstallOperation{OrgID: inst.OrgID, InstallID: inst.ID, Kind: contract.OpDriftCheck,
		PlanOnly: true, ApprovalMode: inst.ApprovalMode, ConfigVersion: inst.ConfigVersion, WorkflowID: workflowID})
	return op.ID, err
}

// EnqueueSyncPlanJob queues, on the install's runner, the plan of a sync of
// the build a container_image component runs: does the install's registry
// still hold it whole? The job reads only that registry (the control plane
// cannot reach it; the sync it plans would copy from the vendor's).
func (a *Drift) EnqueueSyncPlanJob(ctx context.Context, in contract.SyncJobInput) (contract.JobRef, error) {
	op, err := a.store.GetOperationByID(ctx, in.OperationID)
	if err != nil {
		return contract.JobRef{}, err
	}
	ics, err := a.store.ListInstallComponents(ctx, op.InstallID)
	if err != nil {
		return contract.JobRef{}, err
	}
	i := slices.IndexFunc(ics, func(ic store.InstallComponent) bool { return ic.Component == in.Step })
	if i < 0 {
		return contract.JobRef{}, nonRetryable("drift check", fmt.Errorf("the install runs no build of %s: deploy it first", in.Step))
	}
	src, dst, err := a.artifacts.syncEnds(ctx, op.InstallID, ics[i].BuildID, true)
	if err != nil {
		return contract.JobRef{}, err
	}
	m := protocol.OCIManifest{Operation: protocol.OCISyncPlan, Artifact: &src, Destination: dst}
	spec := store.JobSpec{Key: in.Key, Type: protocol.JobTypeOCI, TimeoutMS: buildJobTimeout.Milliseconds()}
	return a.steps.enqueue(ctx, op, in.Step, spec, m, func(jobID string) store.StepChange {
		return store.StepChange{Status: new(status.StepPlanning), StartedAt: new(time.Now().UTC()), PlanJobID: &jobID}
	})
}

// RecordSyncPlan stores a sync_plan job's result on its step as a plan:
// what the install's registry lacks of the image.
func (a *Drift) RecordSyncPlan(ctx context.Context, opID, step, jobID string) (contract.PlanSummary, error) {
	var out protocol.OCISyncPlanOutputs
	if failed, err := a.steps.outputs(ctx, opID, step, jobID, &out); err != nil || failed != "" {
		return failedPlan(failed, err)
	}
	return a.installed.recordPlan(ctx, opID, step, protocol.TerraformPlanOutputs{HasChanges: out.HasChanges, PlanText: out.Plan, Add: len(out.Missing)})
}

// RecordDrift records a drift check's terraform plan job on its step and
// what it found: a plan that is not empty is drift, kept with the plan until
// a later check or an apply of the step clears it.
func (a *Drift) RecordDrift(ctx context.Context, opID, step, jobID string) (contract.PlanSummary, error) {
	return a.recordDrift(ctx, opID, step, jobID, a.terraform.RecordPlan)
}

// RecordHelmDrift is RecordDrift for a helm_chart's plan job: a chart
// drifts when its objects were changed in the cluster (or its chart or
// values would change them).
func (a *Drift) RecordHelmDrift(ctx context.Context, opID, step, jobID string) (contract.PlanSummary, error) {
	return a.recordDrift(ctx, opID, step, jobID, a.helm.RecordHelmPlan)
}

// RecordImageDrift is RecordDrift for a container_image's sync_plan job: an
// image drifts when the install's registry no longer holds it whole.
func (a *Drift) RecordImageDrift(ctx context.Context, opID, step, jobID string) (contract.PlanSummary, error) {
	return a.recordDrift(ctx, opID, step, jobID, a.RecordSyncPlan)
}

func (a *Drift) recordDrift(ctx context.Context, opID, step, jobID string,
	record func(ctx context.Context, opID, step, jobID string) (contract.PlanSummary, error)) (contract.PlanSummary, error) {
	s, err := record(ctx, opID, step, jobID)
	if err != nil || s.Failed {
		return s, err
	}
	op, st, err := a.steps.stepOf(ctx, opID, step)
	if err != nil {
		return s, err
	}
	if err := a.store.RecordDrift(ctx, op.InstallID, step, opID, op.CreatedAt, s.HasChanges, st.PlanText); err != nil || !s.HasChanges {
		return s, err
	}
	return s, a.events.driftFound(ctx, opID, step, s)
}

// BeginDriftReconcile records a reconcile_drift of the install for the drift
// check opID (its TriggeredBy), taking the install's lock. It starts none
// when nothing the check found drifted still is (an apply cleared it
// meanwhile), when the install no longer reconciles drift under
// approve-all, or when another operation holds the install (NotStarted says
// why; the next check finds the drift again).
func (a *Drift) BeginDriftReconcile(ctx context.Context, opID string) (contract.Reconcile, error) {
	check, err := a.store.GetOperationByID(ctx, opID)
	if err != nil {
		return contract.Reconcile{}, err
	}
	inst, err := a.store.GetInstallByID(ctx, check.InstallID)
	if err != nil {
		return contract.Reconcile{}, err
	}
	if !inst.DriftReconcile || inst.ApprovalMode != status.ApproveAll {
		return contract.Reconcile{NotStarted: "drift not reconciled: the install no longer reconciles drift under approve-all"}, nil
	}
	drifted, err := a.plan.stillDrifted(ctx, check)
	if err != nil || len(drifted) == 0 {
		return contract.Reconcile{NotStarted: "drift not reconciled: an apply cleared it before the reconcile"}, err
	}
	op, err := a.store.StartOperation(ctx, store.InstallOperation{OrgID: inst.OrgID, InstallID: inst.ID, Kind: contract.OpReconcileDrift,
		ApprovalMode: inst.ApprovalMode, ConfigVersion: inst.ConfigVersion, TriggeredBy: check.ID,
		WorkflowID: contract.OperationWorkflowID(inst.ID, contract.OpReconcileDrift, "")})
	if errors.Is(err, store.ErrConflict) {
		return contract.Reconcile{NotStarted: "drift not reconciled: " + err.Error()}, nil
	}
	return contract.Reconcile{OperationID: op.ID, WorkflowID: op.WorkflowID}, err
}
