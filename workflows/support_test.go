package workflows

import (
	"context"
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
