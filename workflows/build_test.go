package workflows

import (
	"context"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
)

// A build's job, then its recording: the build's summary is the result.
func TestBuildComponentRecordsItsJob(t *testing.T) {
	env := newEnv()
	registerActivities(env)
	env.RegisterWorkflow(BuildComponent)
	env.OnActivity(contract.EnqueueBuildJob, mockAny, "bld_1", "default-test-workflow-id/job").Return(contract.JobRef{JobID: "job_1", Created: true}, nil)
	env.OnActivity(contract.AwaitJob, mockAny, "job_1", false).Return(contract.JobResult{JobID: "job_1", Status: status.JobSucceeded, Attempt: 1}, nil)
	done := contract.BuildSummary{BuildID: "bld_1", Status: status.BuildSucceeded, Digest: "sha256:abc"}
	env.OnActivity(contract.RecordBuild, mockAny, "bld_1", "job_1").Return(done, nil)
	env.ExecuteWorkflow(BuildComponent, contract.BuildInput{BuildID: "bld_1"})
	var sum contract.BuildSummary
	if err := env.GetWorkflowResult(&sum); err != nil {
		t.Fatal(err)
	}
	env.AssertExpectations(t)
	if sum != done {
		t.Fatalf("result %+v, want %+v", sum, done)
	}
}

// A build whose job's attempts are all lost is recorded failed (FailBuild),
// so that no build stays running.
func TestBuildComponentFailsABuildWhoseAttemptsAreLost(t *testing.T) {
	env := newEnv()
	registerActivities(env)
	env.RegisterWorkflow(BuildComponent)
	env.OnActivity(contract.EnqueueBuildJob, mockAny, "bld_1", mockAny).Return(contract.JobRef{JobID: "job_1", Created: true}, nil)
	attempt := 0
	env.OnActivity(contract.AwaitJob, mockAny, "job_1", false).Return(func(context.Context, string, bool) (contract.JobResult, error) {
		attempt++
		return contract.JobResult{JobID: "job_1", Status: status.JobLost, Attempt: attempt}, nil
	})
	env.OnActivity(contract.RetryJob, mockAny, "job_1", mockAny).Return(nil).Twice()
	var failedWith string
	env.OnActivity(contract.FailBuild, mockAny, "bld_1", mockAny).Return(func(_ context.Context, _, msg string) error {
		failedWith = msg
		return nil
	})
	env.ExecuteWorkflow(BuildComponent, contract.BuildInput{BuildID: "bld_1"})
	if err := env.GetWorkflowError(); err == nil || !strings.Contains(err.Error(), "attempt 3 of 3 lost") {
		t.Fatalf("workflow error %v; want the lost attempts", err)
	}
	env.AssertExpectations(t)
	if !strings.Contains(failedWith, "attempt 3 of 3 lost") {
		t.Fatalf("the build was recorded failed with %q, want the lost attempts", failedWith)
	}
}
