package workflows

import (
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/workflow"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
)

// DriftCheck plans the sandbox and every terraform, helm_chart and
// container_image component of what the install runs, without its lock or
// terraform's state lock, and records
// each step drifted (a plan that is not empty) or not. A schedule starts it
// with in.InstallID (it records its operation itself), the API with
// in.OperationID. When the install reconciles drift, it waits for the
// install's maintenance window (a timer), then starts a reconcile_drift.
func DriftCheck(ctx workflow.Context, in contract.OperationInput) (contract.OperationResult, error) {
	opID := in.OperationID
	if opID == "" {
		wfID := workflow.GetInfo(ctx).WorkflowExecution.ID
		if err := runLocal(ctx, contract.BeginDriftCheck, in.InstallID, wfID).Get(ctx, &opID); err != nil {
			return contract.OperationResult{Status: status.OpFailed, Error: rootMessage(err)}, err
		}
	}
	var plan contract.OperationPlan
	if err := runLocal(ctx, contract.BeginOperation, opID).Get(ctx, &plan); err != nil {
		return beginFailed(ctx, opID, err)
	}
	if _, err := awaitRunner(ctx, opID, plan.RunnerTimeout); err != nil {
		res := contract.OperationResult{Status: status.OpFailed, Steps: map[string]status.Step{}, Error: rootMessage(err)}
		return finishOperation(ctx, opID, res, "")
	}
	res := checkSteps(ctx, opID, plan)
	if res.Status == status.OpSucceeded && plan.DriftReconcile && drifted(res) {
		res.Error = reconcile(ctx, opID, plan)
		if ctx.Err() != nil {
			res.Status = status.OpCancelled
		}
	}
	return finishOperation(ctx, opID, res, "") // a check leaves the install's status as it is
}

// checkSteps plans every step at once and waits for them all.
func checkSteps(ctx workflow.Context, opID string, plan contract.OperationPlan) contract.OperationResult {
	res := contract.OperationResult{Status: status.OpSucceeded, Steps: map[string]status.Step{}}
	done := workflow.NewChannel(ctx)
	lost := &unrecorded{}
	for _, spec := range plan.Steps {
		st := &step{opID: opID, plan: plan, spec: spec, jobs: JobPolicy{Wait: plan.JobWait}, lost: lost}
		workflow.Go(ctx, func(ctx workflow.Context) { done.Send(ctx, st.checkDrift(ctx)) })
	}
	for range plan.Steps {
		var out stepOutcome
		done.Receive(ctx, &out)
		res.Steps[out.Name] = out.Status
		switch {
		case out.Status == status.StepCancelled:
			res.Status = status.OpCancelled
		case out.Status == status.StepFailed && res.Status == status.OpSucceeded:
			res.Status, res.Error = status.OpFailed, out.Name+": "+out.Error
		}
	}
	res.Error = lost.withNote(res.Error)
	return res
}

// checkDrift plans the step and records what it found: drifted,
// no_changes, or failed. A terraform plan takes no state lock; a chart's
// plan (helm's dry run and the cluster's objects compared) and an image's
// (what the install's registry lacks of it) take none either.
func (s *step) checkDrift(ctx workflow.Context) stepOutcome {
	plan, record := s.terraformDriftPlan(), contract.RecordDrift
	switch s.spec.Type {
	case contract.TypeHelmChart:
		plan, record = s.helmJob(protocol.HelmPlan), contract.RecordHelmDrift
	case contract.TypeContainerImage:
		plan, record = s.syncPlan(), contract.RecordImageDrift
	}
	var summary contract.PlanSummary
	if _, outcome, msg := s.runAndRecord(ctx, plan, &summary, record); outcome != "" {
		return s.end(ctx, outcome, msg)
	}
	switch {
	case summary.Failed:
		return s.end(ctx, status.StepFailed, summary.Error)
	case summary.HasChanges:
		return s.end(ctx, status.StepDrifted, "")
	}
	return s.end(ctx, status.StepNoChanges, "")
}

// terraformDriftPlan runs a terraform plan of the step without the state
// lock.
func (s *step) terraformDriftPlan() func(workflow.Context) (contract.JobResult, error) {
	return func(ctx workflow.Context) (contract.JobResult, error) {
		in := contract.TerraformJobInput{OperationID: s.opID, Step: s.spec.Name, Operation: protocol.TerraformPlan,
			Key: s.jobKey(ctx, "drift"), NoLock: true}
		return RunJob(ctx, func(c workflow.Context) workflow.Future {
			return callLocal(c, contract.EnqueueTerraformJob, in)
		}, s.jobs)
	}
}

// syncPlan runs the plan of a sync of the image the install runs.
func (s *step) syncPlan() func(workflow.Context) (contract.JobResult, error) {
	return func(ctx workflow.Context) (contract.JobResult, error) {
		in := contract.SyncJobInput{OperationID: s.opID, Step: s.spec.Name, Key: s.jobKey(ctx, "sync-plan")}
		return RunJob(ctx, func(c workflow.Context) workflow.Future {
			return callLocal(c, contract.EnqueueSyncPlanJob, in)
		}, s.jobs)
	}
}

func drifted(res contract.OperationResult) bool {
	for _, st := range res.Steps {
		if st == status.StepDrifted {
			return true
		}
	}
	return false
}

// reconcile waits for the install's maintenance window, then starts a
// reconcile_drift (a child workflow that outlives the check). It returns what
// the check's operation says of it ("" when it started).
func reconcile(ctx workflow.Context, opID string, plan contract.OperationPlan) string {
	if _, err := AwaitMaintenanceWindow(ctx, plan.InstallID, opID); err != nil {
		return rootMessage(err)
	}
	var r contract.Reconcile
	if err := runLocal(ctx, contract.BeginDriftReconcile, opID).Get(ctx, &r); err != nil {
		return rootMessage(err)
	}
	if r.NotStarted != "" {
		return r.NotStarted
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: r.WorkflowID,
		ParentClosePolicy:     enums.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE})
	child := workflow.ExecuteChildWorkflow(cctx, contract.WorkflowReconcileDrift, contract.OperationInput{OperationID: r.OperationID})
	if err := child.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
		why := "drift not reconciled: " + rootMessage(err)
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		if ferr := runLocal(dctx, contract.FinishOperation, r.OperationID, status.OpFailed, "the reconcile could not start: "+rootMessage(err), status.Install("")).Get(dctx, nil); ferr != nil {
			lost := &unrecorded{}
			lost.add(ctx, "the end of reconcile "+r.OperationID, ferr)
			why = lost.withNote(why)
		}
		return why
	}
	return ""
}
