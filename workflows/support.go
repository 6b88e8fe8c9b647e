package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
)

// SupportBundle runs a support job on the install's runner, which uploads the redacted archive, and
// records the outcome. It is not an install operation: it changes nothing, so it runs beside one.
func SupportBundle(ctx workflow.Context, in contract.SupportBundleInput) (contract.SupportBundleResult, error) {
	key := workflow.GetInfo(ctx).WorkflowExecution.ID + "/job"
	res, err := RunJob(ctx, func(c workflow.Context) workflow.Future {
		return call(c, contract.EnqueueSupportJob, in.BundleID, key)
	}, JobPolicy{MaxAttempts: 3, Wait: 30 * time.Minute})
	out := contract.SupportBundleResult{BundleID: in.BundleID, JobID: res.JobID, Attempts: res.Attempt, Status: res.Status, Error: res.Error}
	if err != nil {
		out.Status, out.Error = status.JobFailed, err.Error()
		if ctx.Err() != nil {
			out.Status, out.Error = status.JobCancelled, "cancelled"
		}
	}
	// Record the outcome even when cancelled.
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	fin := contract.SupportResult{JobID: out.JobID, Status: out.Status, Error: out.Error}
	if ferr := call(shortActivity(dctx), contract.FinishSupportBundle, in.BundleID, fin).Get(dctx, nil); ferr != nil && err == nil {
		err = ferr
	}
	return out, err
}

// KubeLogs runs a kube_logs job on the install's runner: its log lines are the answer, followed
// through the job's logs. One attempt: a lost one is asked for again by the user.
func KubeLogs(ctx workflow.Context, req contract.KubeLogsRequest) (contract.JobResult, error) {
	key := contract.KubeLogsJobKey(workflow.GetInfo(ctx).WorkflowExecution.ID)
	return RunJob(ctx, func(c workflow.Context) workflow.Future {
		return call(c, contract.EnqueueKubeLogsJob, req, key)
	}, JobPolicy{MaxAttempts: 1, Wait: 15 * time.Minute})
}
