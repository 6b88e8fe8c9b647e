package workflows

import (
	"time"

	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
)

// buildJobWait bounds a build job, queueing on the build runner included;
// buildAttempts is how many attempts it gets when attempts are lost.
const (
	buildJobWait  = time.Hour
	buildAttempts = 3
)

// buildWait bounds a step's wait for a build: every attempt of its job.
const buildWait = buildAttempts*buildJobWait + 15*time.Minute

// BuildComponent turns a component's source into an immutable artifact in
// the vendor's registry on the org's build runner, and records its digest
// (workflow ID "app/<app id>/build/<build id>"). A build that fails records
// its error and names no artifact.
func BuildComponent(ctx workflow.Context, in contract.BuildInput) (contract.BuildSummary, error) {
	key := workflow.GetInfo(ctx).WorkflowExecution.ID + "/job"
	// fail records the build's end when it did not succeed, whatever
	// happened: a build left "running" would be reused forever.
	fail := func(msg string) (contract.BuildSummary, error) {
		if ctx.Err() != nil {
			msg = "build cancelled"
		}
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		rctx := workflow.WithActivityOptions(dctx, workflow.ActivityOptions{
			StartToCloseTimeout: 30 * time.Second,
			RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute},
		})
		if err := call(rctx, contract.FailBuild, in.BuildID, msg).Get(dctx, nil); err != nil {
			return contract.BuildSummary{}, err
		}
		return contract.BuildSummary{BuildID: in.BuildID, Status: status.BuildFailed, Error: msg},
			temporal.NewNonRetryableApplicationError(msg, "BuildFailed", nil)
	}
	job, err := RunJob(ctx, func(c workflow.Context) workflow.Future {
		return callLocal(c, contract.EnqueueBuildJob, in.BuildID, key)
	}, JobPolicy{MaxAttempts: buildAttempts, Wait: buildJobWait})
	if err != nil {
		return fail(rootMessage(err))
	}
	var sum contract.BuildSummary
	if err := callLocal(localActivity(ctx), contract.RecordBuild, in.BuildID, job.JobID).Get(ctx, &sum); err != nil {
		return fail("recording the build: " + rootMessage(err))
	}
	if sum.Status != status.BuildSucceeded {
		return sum, temporal.NewNonRetryableApplicationError(sum.Error, "BuildFailed", nil)
	}
	return sum, nil
}

// awaitBuild makes sure the step's build exists (starting its workflow when
// the step had to queue it) and waits for it to end.
func awaitBuild(ctx workflow.Context, opID, step string) (contract.BuildSummary, error) {
	var rb contract.ResolvedBuild
	if err := callLocal(localActivity(ctx), contract.ResolveBuild, opID, step).Get(ctx, &rb); err != nil {
		return contract.BuildSummary{}, err
	}
	if status.BuildTerminal(rb.Status) {
		return rb.BuildSummary, nil
	}
	if rb.Status == status.BuildQueued {
		// Start the build as an abandoned child from a disconnected context: it
		// is the app's, not this operation's (see docs/architecture/temporal.md).
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		cctx := workflow.WithChildOptions(dctx, workflow.ChildWorkflowOptions{
			WorkflowID:            rb.WorkflowID,
			ParentClosePolicy:     enums.PARENT_CLOSE_POLICY_ABANDON,
			WorkflowIDReusePolicy: enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		})
		child := workflow.ExecuteChildWorkflow(cctx, contract.WorkflowBuildComponent, contract.BuildInput{BuildID: rb.BuildID})
		err := child.GetChildWorkflowExecution().Get(ctx, nil)
		if err != nil && !temporal.IsWorkflowExecutionAlreadyStartedError(err) {
			return contract.BuildSummary{}, err
		}
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		ScheduleToCloseTimeout: buildWait,
		HeartbeatTimeout:       awaitHeartbeat,
		RetryPolicy:            &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 10 * time.Second},
	})
	var sum contract.BuildSummary
	err := call(actx, contract.AwaitBuild, rb.BuildID).Get(ctx, &sum)
	return sum, err
}
