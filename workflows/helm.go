package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/outpost-dev/outpost/activities"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// runChartStep deploys a helm_chart component whose build is in the
// install's registry: a plan (a dry-run diffed against the live release),
// approval when the install asks for it, then the deploy; a plan without
// changes deploys nothing. Tearing it down uninstalls the release, after
// the same approval (its plan says what goes).
func runChartStep(ctx workflow.Context, opID string, plan activities.OperationPlan, st activities.StepSpec,
	approval workflow.Channel, setStatus func(string, string) stepOutcome, p JobPolicy) stepOutcome {
	run := func(operation string) (activities.JobResult, error) {
		key := workflow.GetInfo(ctx).WorkflowExecution.ID + "/" + opID + "/" + st.Name + "/helm-" + operation
		return RunJob(ctx, func(c workflow.Context) workflow.Future {
			return workflow.ExecuteLocalActivity(c, a.EnqueueHelmJob, activities.HelmJobInput{
				OperationID: opID, Step: st.Name, Operation: operation, Key: key})
		}, p)
	}
	release := func(operation string) stepOutcome {
		job, err := run(operation)
		if err != nil {
			return setStatus(interrupted(ctx, err))
		}
		var res activities.ApplySummary
		if err := workflow.ExecuteLocalActivity(localActivity(ctx), a.RecordHelmRelease, opID, st.Name, job.JobID).Get(ctx, &res); err != nil {
			return setStatus(store.StepFailed, rootMessage(err))
		}
		if res.Failed {
			return setStatus(store.StepFailed, res.Error)
		}
		return setStatus(store.StepSucceeded, "")
	}
	var summary activities.PlanSummary
	if st.Destroy {
		// The plan of a teardown needs no job: the whole release goes.
		if err := workflow.ExecuteLocalActivity(localActivity(ctx), a.PlanUninstall, opID, st.Name).Get(ctx, &summary); err != nil {
			return setStatus(store.StepFailed, rootMessage(err))
		}
	} else {
		planJob, err := run(protocol.HelmPlan)
		if err != nil {
			return setStatus(interrupted(ctx, err))
		}
		if err := workflow.ExecuteLocalActivity(localActivity(ctx), a.RecordHelmPlan, opID, st.Name, planJob.JobID).Get(ctx, &summary); err != nil {
			return setStatus(store.StepFailed, rootMessage(err))
		}
	}
	switch {
	case summary.Failed:
		return setStatus(store.StepFailed, summary.Error)
	case !summary.HasChanges:
		return setStatus(store.StepNoChanges, "")
	case plan.PlanOnly:
		return setStatus(store.StepPlanned, "")
	}
	if plan.ApprovalMode == store.Prompt {
		if status, msg := awaitApproval(ctx, approval, setStatus); status != "" {
			return setStatus(status, msg)
		}
	}
	if st.Destroy {
		return release(protocol.HelmUninstall)
	}
	return release(protocol.HelmDeploy)
}
