package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/outpost-dev/outpost/activities"
	"github.com/outpost-dev/outpost/contract/status"
)

// InstallCommandWorkflowID is the ID of the workflow that runs a debug
// command.
func InstallCommandWorkflowID(installID, commandID string) string {
	return "install/" + installID + "/command/" + commandID
}

// InstallCommandInput names the command; its arguments stay in the store.
type InstallCommandInput struct {
	InstallID string
	CommandID string
	TimeoutMS int64
}

// InstallCommandResult is what the command produced: it is the workflow's
// result, so the Temporal UI shows exit code and output.
type InstallCommandResult struct {
	CommandID string
	JobID     string
	Attempts  int
	activities.CommandResult
}

// InstallCommand runs a debug command on the install's runner and records
// its exit code and output.
func InstallCommand(ctx workflow.Context, in InstallCommandInput) (InstallCommandResult, error) {
	key := workflow.GetInfo(ctx).WorkflowExecution.ID + "/job"
	res, err := RunJob(ctx, func(c workflow.Context) workflow.Future {
		return workflow.ExecuteActivity(c, a.EnqueueCommandJob, in.CommandID, key)
	}, JobPolicy{MaxAttempts: 3, Wait: time.Duration(in.TimeoutMS)*time.Millisecond + 15*time.Minute, WithOutputs: true})
	out := InstallCommandResult{CommandID: in.CommandID, JobID: res.JobID, Attempts: res.Attempt,
		CommandResult: activities.CommandResultOf(res)}
	if err != nil {
		out.Status, out.Error = status.JobFailed, err.Error()
		if ctx.Err() != nil {
			out.Status, out.Error = status.JobCancelled, "cancelled"
		}
	}
	// Record the outcome even when cancelled.
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	if ferr := workflow.ExecuteActivity(shortActivity(dctx), a.FinishCommand, in.CommandID, out.CommandResult).Get(dctx, nil); ferr != nil && err == nil {
		err = ferr
	}
	return out, err
}
