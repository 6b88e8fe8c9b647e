package workflows

import (
	"context"
	"testing"

	"github.com/outpost-dev/outpost/activities"
	"github.com/outpost-dev/outpost/contract/status"
)

// A support bundle's job is awaited without its outputs (they stay in the store), and how it ended
// is recorded whether it succeeded or failed.
func TestSupportBundleRecordsHowItsJobEnded(t *testing.T) {
	for _, end := range []activities.JobResult{
		{JobID: "job_1", Status: status.JobSucceeded, Attempt: 1},
		{JobID: "job_1", Status: status.JobFailed, Attempt: 1, Error: "the support bundle is 40 bytes, over its cap of 30 bytes"},
	} {
		env := newEnv()
		env.RegisterActivity(&activities.Activities{})
		env.RegisterWorkflow(SupportBundle)
		env.OnActivity(a.EnqueueSupportJob, mockAny, "sb_1", "default-test-workflow-id/job").Return(activities.JobRef{JobID: "job_1", Created: true}, nil)
		env.OnActivity(a.AwaitJob, mockAny, "job_1", false).Return(end, nil)
		var finished activities.SupportResult
		env.OnActivity(a.FinishSupportBundle, mockAny, "sb_1", mockAny).Return(func(_ context.Context, _ string, r activities.SupportResult) error {
			finished = r
			return nil
		})
		env.ExecuteWorkflow(SupportBundle, SupportBundleInput{InstallID: "ins_1", BundleID: "sb_1"})
		if err := env.GetWorkflowError(); err != nil {
			t.Fatal(err)
		}
		if finished != (activities.SupportResult{JobID: "job_1", Status: end.Status, Error: end.Error}) {
			t.Fatalf("job ended %+v, recorded %+v", end, finished)
		}
	}
}
