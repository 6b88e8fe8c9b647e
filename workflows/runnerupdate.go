package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
)

// UpdateRunner moves an install's runner to a new version: the install's
// runner copies the binary into the install's registry (sync), stages it
// (runner_update) and hands over to it; the new runner must then run a
// noop health job within the deadline, or the old one rolls back (and
// runs the health job itself, which fails the update). The outcome is
// recorded on the update (docs/architecture/runner-update.md).
func UpdateRunner(ctx workflow.Context, in contract.RunnerUpdateInput) (string, error) {
	// Jobs are keyed by update: the workflow ID is the install's for every update.
	id := workflow.GetInfo(ctx).WorkflowExecution.ID + "/" + in.UpdateID
	run := func(step, enqueue string, p JobPolicy, args ...any) string {
		res, err := RunJob(ctx, func(c workflow.Context) workflow.Future {
			return call(c, enqueue, append([]any{in.UpdateID, id + "/" + step}, args...)...)
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
	var end contract.RunnerUpdateEnd
	end.Failure = run("sync", contract.EnqueueRunnerSyncJob, JobPolicy{Wait: 30 * time.Minute})
	if end.Failure == "" {
		end.Failure = run("stage", contract.EnqueueRunnerUpdateJob, JobPolicy{MaxAttempts: 1, Wait: 30 * time.Minute}, in.HealthDeadline, in.DrainTimeout)
	}
	if end.Failure == "" {
		// The old runner claims nothing during the hand-over: only the new
		// one, or the old one once it rolled back, runs this job. The wait
		// counts the drain too: the hand-over starts once the old runner's
		// jobs finished (or it gives up at the drain timeout and rolls back).
		var err error
		end.Health, err = RunJob(ctx, func(c workflow.Context) workflow.Future {
			return call(c, contract.EnqueueRunnerHealthJob, in.UpdateID, id+"/health")
		}, JobPolicy{Wait: in.DrainTimeout + in.HealthDeadline + 2*time.Minute})
		if err != nil {
			end.Failure = "health: no runner ran the health job: " + rootMessage(err)
		}
	}
	var outcome string
	err := record(ctx, &outcome, contract.FinishRunnerUpdate, in.UpdateID, end)
	return outcome, err
}
