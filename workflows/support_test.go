package workflows

import (
	"context"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
)

// A support bundle's job is awaited without its outputs (they stay in the store), and how it ended
// is recorded whether it succeeded or failed.
func TestSupportBundleRecordsHowItsJobEnded(t *testing.T) {
	for _, end := range []contract.JobResult{
		{JobID: "job_1", Status: status.JobSucceeded, Attempt: 1},
		{JobID: "job_1", Status: status.JobFailed, Attempt: 1, Error: "the support bundle is 40 bytes, over its cap of 30 bytes"},
	} {
		env := newEnv()
		registerActivities(env)
		env.RegisterWorkflow(SupportBundle)
		env.OnActivity(contract.EnqueueSupportJob, mockAny, "sb_1", "default-test-workflow-id/job").Return(contract.JobRef{JobID: "job_1", Created: true}, nil)
		env.OnActivity(contract.AwaitJob, mockAny, "job_1", false).Return(end, nil)
		var finished contract.SupportResult
		env.OnActivity(contract.FinishSupportBundle, mockAny, "sb_1", mockAny).Return(func(_ context.Context, _ string, r contract.SupportResult) error {
			finished = r
			return nil
		})
		env.ExecuteWorkflow(SupportBundle, contract.SupportBundleInput{InstallID: "ins_1", BundleID: "sb_1"})
		if err := env.GetWorkflowError(); err != nil {
			t.Fatal(err)
		}
		if finished != (contract.SupportResult{JobID: "job_1", Status: end.Status, Error: end.Error}) {
			t.Fatalf("job ended %+v, recorded %+v", end, finished)
		}
	}
}

// A logs request's job is queued under the key the API finds it by, and
// gets one attempt: a lost one is the request's end (the user asks again).
func TestKubeLogsRunsOneAttempt(t *testing.T) {
	req := contract.KubeLogsRequest{InstallID: "ins_1", Namespace: "app", Workload: "deploy/web", TailLines: 50}
	for _, end := range []contract.JobResult{
		{JobID: "job_1", Status: status.JobSucceeded, Attempt: 1},
		{JobID: "job_1", Status: status.JobLost, Attempt: 1},
	} {
		env := newEnv()
		registerActivities(env)
		env.RegisterWorkflow(KubeLogs)
		env.OnActivity(contract.EnqueueKubeLogsJob, mockAny, req, contract.KubeLogsJobKey("default-test-workflow-id")).
			Return(contract.JobRef{JobID: "job_1", Created: true}, nil)
		env.OnActivity(contract.AwaitJob, mockAny, "job_1", false).Return(end, nil).Once()
		env.ExecuteWorkflow(KubeLogs, req)
		env.AssertExpectations(t)
		var res contract.JobResult
		err := env.GetWorkflowResult(&res)
		switch end.Status {
		case status.JobSucceeded:
			if err != nil || res.JobID != end.JobID || res.Status != end.Status {
				t.Fatalf("result %+v, %v; want %+v", res, err, end)
			}
		default:
			if err == nil || !strings.Contains(err.Error(), "attempt 1 of 1 lost") {
				t.Fatalf("a lost attempt: error %v; want it said, and no retry", err)
			}
		}
	}
}
