package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
)

// exclusiveActionsChange is the change by which a run that ended before its
// workflow ran a step (a scheduled exclusive run refused: the install was
// locked) runs and records nothing more (docs/architecture/temporal.md,
// "Workflow versions").
const exclusiveActionsChange = "exclusive-actions"

// ActionRun runs an install's action one step at a time, each step a job of
// type action on the install's runner, and stops at the first step that does
// not succeed (the rest are skipped). A step's outputs stay out of history:
// FinishActionStep stores them and returns only the step's status. A run a
// schedule starts (no RunID) is recorded first.
func ActionRun(ctx workflow.Context, in contract.ActionRunInput) (contract.ActionRunResult, error) {
	wfID := workflow.GetInfo(ctx).WorkflowExecution.ID
	if in.RunID == "" {
		if err := call(shortActivity(ctx), contract.RecordActionRun, in.InstallID, in.Action, wfID).Get(ctx, &in.RunID); err != nil {
			return contract.ActionRunResult{Status: string(status.JobFailed), Error: err.Error()}, err
		}
	}
	out := contract.ActionRunResult{RunID: in.RunID, Steps: map[string]string{}}
	var plan contract.ActionRunPlan
	err := call(shortActivity(ctx), contract.LoadActionRun, in.RunID).Get(ctx, &plan)
	if err == nil && plan.Ended != "" && workflow.GetVersion(ctx, exclusiveActionsChange, workflow.DefaultVersion, 1) == 1 {
		out.Status, out.Error = plan.Ended, "the run ended before it started (see its record)"
		return out, nil
	}
	st := status.JobSucceeded
	for i := 0; err == nil && i < len(plan.Steps); i++ {
		st, err = runActionStep(ctx, plan, i, wfID)
		out.Steps[plan.Steps[i]] = string(st)
		if err == nil && st != status.JobSucceeded {
			out.Error = fmt.Sprintf("step %s %s", plan.Steps[i], st)
			break
		}
	}
	if err != nil {
		st, out.Error = status.JobFailed, err.Error()
	}
	st, out.Error, err = endRun(ctx, contract.FinishActionRun, in.RunID, st, out.Error, err)
	out.Status = string(st)
	return out, err
}

// runActionStep runs step i and records how it ended (also when its job was
// lost or the run is cancelled); it returns the step's status as recorded.
func runActionStep(ctx workflow.Context, plan contract.ActionRunPlan, i int, wfID string) (status.Job, error) {
	key := contract.ActionStepJobKey(wfID, i)
	res, err := RunJob(ctx, func(c workflow.Context) workflow.Future {
		return call(c, contract.EnqueueActionStepJob, plan.RunID, i, key)
	}, JobPolicy{MaxAttempts: 3, Wait: time.Duration(plan.StepTimeoutMS)*time.Millisecond + 15*time.Minute})
	if err != nil {
		res.Status, res.Error = failure(ctx, err)
	}
	if res.JobID == "" && err != nil {
		res.Error = "the step's job could not be queued: " + res.Error
	}
	var st status.Job
	if ferr := record(ctx, &st, contract.FinishActionStep, plan.RunID, i, res); ferr != nil {
		return status.JobFailed, ferr
	}
	return st, nil
}
