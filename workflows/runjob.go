package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
)

// JobPolicy says how RunJob treats one job.
type JobPolicy struct {
	// MaxAttempts bounds how many attempts a job gets when attempts are lost
	// (runner died, lease expired). Default 3.
	MaxAttempts int
	// Wait bounds the whole wait for the job: queueing (the runner may be
	// offline) plus running. Default 1 hour.
	Wait time.Duration
	// WithOutputs returns the job's outputs in the result — and so in
	// Temporal history. Only for small, non-secret outputs.
	WithOutputs bool
	// Queued, when set, runs once the job is queued (to give deferred inputs); when it fails, the job
	// is cancelled with its message and RunJob returns its error.
	Queued func(ctx workflow.Context, jobID string) error
}

// shortActivity is the options of the quick store activities.
func shortActivity(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 30 * time.Second, MaximumAttempts: 10},
	})
}

// localActivity is the options of the quick store activities on the steps' critical path
// (docs/architecture/temporal.md, Local activities): retries for a minute ride out a database restart.
func localActivity(ctx workflow.Context) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		ScheduleToCloseTimeout: time.Minute,
		StartToCloseTimeout:    30 * time.Second,
		RetryPolicy:            &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 30 * time.Second, MaximumAttempts: 10},
	})
}

// awaitHeartbeat is how long an await may go without heartbeating before
// Temporal gives it to another worker (a worker that died mid-await).
const awaitHeartbeat = 20 * time.Second

// RunJob has a runner run a job: enqueue (idempotent: the enqueue activity
// is keyed by workflow ID and step), await its end, retry lost attempts up
// to the policy, and turn workflow cancellation into a cancel request the
// runner sees at once. It returns the job's final result; a job that failed
// is a result, not an error.
func RunJob(ctx workflow.Context, enqueue func(workflow.Context) workflow.Future, p JobPolicy) (contract.JobResult, error) {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 3
	}
	if p.Wait <= 0 {
		p.Wait = time.Hour
	}
	var ref contract.JobRef
	// enqueue may run a regular or a local activity: both options are set.
	if err := enqueue(localActivity(shortActivity(ctx))).Get(ctx, &ref); err != nil {
		return contract.JobResult{}, fmt.Errorf("enqueue job: %w", err)
	}
	cancelJob := func(reason string) {
		// Tell the runner even though this context may be done.
		if err := record(ctx, nil, contract.CancelJob, ref.JobID, reason); err != nil {
			// The job may go on: its wait's error is what the workflow returns.
			workflow.GetLogger(ctx).Error("cancelling the job failed", "job", ref.JobID, "reason", reason, "error", err)
		}
	}
	if p.Queued != nil {
		if err := p.Queued(ctx, ref.JobID); err != nil {
			reason := err.Error()
			if ctx.Err() != nil {
				reason = "workflow cancelled"
			}
			cancelJob(reason)
			return contract.JobResult{JobID: ref.JobID}, err
		}
	}
	awaitCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		ScheduleToCloseTimeout: p.Wait,
		HeartbeatTimeout:       awaitHeartbeat,
		RetryPolicy:            &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 10 * time.Second},
	})
	for {
		var res contract.JobResult
		err := call(awaitCtx, contract.AwaitJob, ref.JobID, p.WithOutputs).Get(awaitCtx, &res)
		if err != nil {
			reason := "the job's wait ended: " + err.Error()
			var canceled *temporal.CanceledError
			if errors.As(err, &canceled) || ctx.Err() != nil {
				reason = "workflow cancelled"
			}
			cancelJob(reason)
			return contract.JobResult{JobID: ref.JobID}, err
		}
		if res.Status != status.JobLost {
			return res, nil
		}
		if res.Attempt >= p.MaxAttempts {
			return res, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("job %s: attempt %d of %d lost (runner stopped renewing its lease)", res.JobID, res.Attempt, p.MaxAttempts),
				"JobAttemptsExhausted", nil)
		}
		workflow.GetLogger(ctx).Info("job attempt lost, retrying", "job", res.JobID, "attempt", res.Attempt)
		if err := call(shortActivity(ctx), contract.RetryJob, ref.JobID, res.Attempt).Get(ctx, nil); err != nil {
			return res, fmt.Errorf("retry job: %w", err)
		}
	}
}
