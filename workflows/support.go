package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/outpost-dev/outpost/activities"
	"github.com/outpost-dev/outpost/contract/status"
)

// SupportBundleWorkflowID is the ID of the workflow that collects a support bundle.
func SupportBundleWorkflowID(installID, bundleID string) string {
	return "install/" + installID + "/support-bundle/" + bundleID
}

// SupportBundleInput names the bundle; everything else stays in the store.
type SupportBundleInput struct {
	InstallID string
	BundleID  string
}

// SupportBundleResult is the workflow's result: which job collected the bundle and how it ended (what
// the archive holds is in the store, never in history).
type SupportBundleResult struct {
	BundleID string
	JobID    string
	Attempts int
	Status   status.Job
	Error    string
}

// SupportBundle runs a support job on the install's runner, which uploads the redacted archive, and
// records the outcome. It is not an install operation: it changes nothing, so it runs beside one.
func SupportBundle(ctx workflow.Context, in SupportBundleInput) (SupportBundleResult, error) {
	key := workflow.GetInfo(ctx).WorkflowExecution.ID + "/job"
	res, err := RunJob(ctx, func(c workflow.Context) workflow.Future {
		return workflow.ExecuteActivity(c, a.EnqueueSupportJob, in.BundleID, key)
	}, JobPolicy{MaxAttempts: 3, Wait: 30 * time.Minute})
	out := SupportBundleResult{BundleID: in.BundleID, JobID: res.JobID, Attempts: res.Attempt, Status: res.Status, Error: res.Error}
	if err != nil {
		out.Status, out.Error = status.JobFailed, err.Error()
		if ctx.Err() != nil {
			out.Status, out.Error = status.JobCancelled, "cancelled"
		}
	}
	// Record the outcome even when cancelled.
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	fin := activities.SupportResult{JobID: out.JobID, Status: out.Status, Error: out.Error}
	if ferr := workflow.ExecuteActivity(shortActivity(dctx), a.FinishSupportBundle, in.BundleID, fin).Get(dctx, nil); ferr != nil && err == nil {
		err = ferr
	}
	return out, err
}

// KubeLogsWorkflowID is the ID of the workflow of a logs request.
func KubeLogsWorkflowID(installID, requestID string) string {
	return "install/" + installID + "/logs/" + requestID
}

// KubeLogsJobKey is the key of the job a logs request's workflow queues: the API finds the job by it.
func KubeLogsJobKey(workflowID string) string { return workflowID + "/job" }

// KubeLogs runs a kube_logs job on the install's runner: its log lines are the answer, followed
// through the job's logs. One attempt: a lost one is asked for again by the user.
func KubeLogs(ctx workflow.Context, req activities.KubeLogsRequest) (activities.JobResult, error) {
	key := KubeLogsJobKey(workflow.GetInfo(ctx).WorkflowExecution.ID)
	return RunJob(ctx, func(c workflow.Context) workflow.Future {
		return workflow.ExecuteActivity(c, a.EnqueueKubeLogsJob, req, key)
	}, JobPolicy{MaxAttempts: 1, Wait: 15 * time.Minute})
}
