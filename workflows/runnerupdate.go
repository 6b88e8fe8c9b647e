package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/outpost-dev/outpost/activities"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
)

// RunnerUpdateWorkflowID is the ID of the workflow that updates an
// install's runner: one at a time per install (a second start is refused).
func RunnerUpdateWorkflowID(installID string) string {
	return "install/" + installID + "/runner-update"
}

// RunnerUpdateInput names the update; the rest stays in the store.
type RunnerUpdateInput struct {
	UpdateID string
	// HealthDeadline is how long the new runner has to be healthy.
	HealthDeadline time.Duration
	// DrainTimeout is how long the old runner waits for its running jobs
	// before it hands over (0: protocol.DefaultDrainTimeout).
	DrainTimeout time.Duration
}

// UpdateRunner moves an install's runner to a new version: the install's
// runner copies the binary into the install's registry (sync), stages it
// (runner_update) and hands over to it; the new runner must then run a
// noop health job within the deadline, or the old one rolls back (and
// runs the health job itself, which fails the update). The outcome is
// recorded on the update (docs/ARCHITECTURE.md, Runner self-update).
func UpdateRunner(ctx workflow.Context, in RunnerUpdateInput) (string, error) {
	// Jobs are keyed by update: the workflow ID is the install's for every update.
	id := workflow.GetInfo(ctx).WorkflowExecution.ID + "/" + in.UpdateID
	run := func(step string, enqueue any, p JobPolicy, args ...any) string {
		res, err := RunJob(ctx, func(c workflow.Context) workflow.Future {
			return workflow.ExecuteActivity(c, enqueue, append([]any{in.UpdateID, id + "/" + step}, args...)...)
		}, p)
		switch {
		case err != nil:
			return step + ": " + rootMessage(err)
		case res.Status != status.JobSucceeded:
			return fmt.Sprintf("%s: job %s %s: %s", step, res.JobID, res.Status, res.Error)
		}
		return ""
	}
	if in.DrainTimeout <= 0 {
		in.DrainTimeout = protocol.DefaultDrainTimeout
	}
	var end activities.RunnerUpdateEnd
	end.Failure = run("sync", a.EnqueueRunnerSyncJob, JobPolicy{Wait: 30 * time.Minute})
	if end.Failure == "" {
		end.Failure = run("stage", a.EnqueueRunnerUpdateJob, JobPolicy{MaxAttempts: 1, Wait: 30 * time.Minute}, in.HealthDeadline, in.DrainTimeout)
	}
	if end.Failure == "" {
		// The old runner claims nothing during the hand-over: only the new
		// one, or the old one once it rolled back, runs this job. The wait
		// counts the drain too: the hand-over starts once the old runner's
		// jobs finished (or it gives up at the drain timeout and rolls back).
		var err error
		end.Health, err = RunJob(ctx, func(c workflow.Context) workflow.Future {
			return workflow.ExecuteActivity(c, a.EnqueueRunnerHealthJob, in.UpdateID, id+"/health")
		}, JobPolicy{Wait: in.DrainTimeout + in.HealthDeadline + 2*time.Minute})
		if err != nil {
			end.Failure = "health: no runner ran the health job: " + rootMessage(err)
		}
	}
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	var outcome string
	err := workflow.ExecuteActivity(shortActivity(dctx), a.FinishRunnerUpdate, in.UpdateID, end).Get(dctx, &outcome)
	return outcome, err
}
