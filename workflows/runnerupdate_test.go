package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
)

// The stage job gets the update's drain timeout (protocol.DefaultDrainTimeout when none is given),
// and the update is finished with the health job's result.
func TestUpdateRunnerPassesTheDrainTimeout(t *testing.T) {
	for given, want := range map[time.Duration]time.Duration{0: protocol.DefaultDrainTimeout, 5 * time.Second: 5 * time.Second} {
		env := newEnv()
		registerActivities(env)
		env.RegisterWorkflow(UpdateRunner)
		ok := contract.JobResult{JobID: "job_1", Status: status.JobSucceeded, Attempt: 1}
		env.OnActivity(contract.EnqueueRunnerSyncJob, mockAny, "rup_1", mockAny).Return(contract.JobRef{JobID: "job_1", Created: true}, nil)
		env.OnActivity(contract.EnqueueRunnerUpdateJob, mockAny, "rup_1", mockAny, 2*time.Minute, want).Return(contract.JobRef{JobID: "job_1", Created: true}, nil)
		env.OnActivity(contract.EnqueueRunnerHealthJob, mockAny, "rup_1", mockAny).Return(contract.JobRef{JobID: "job_1", Created: true}, nil)
		env.OnActivity(contract.AwaitJob, mockAny, "job_1", mockAny).Return(ok, nil)
		var end contract.RunnerUpdateEnd
		env.OnActivity(contract.FinishRunnerUpdate, mockAny, "rup_1", mockAny).Return(func(_ context.Context, _ string, e contract.RunnerUpdateEnd) (string, error) {
			end = e
			return "succeeded", nil
		})
		env.ExecuteWorkflow(UpdateRunner, contract.RunnerUpdateInput{UpdateID: "rup_1", HealthDeadline: 2 * time.Minute, DrainTimeout: given})
		if err := env.GetWorkflowError(); err != nil {
			t.Fatalf("drain timeout %s: %v", given, err)
		}
		env.AssertExpectations(t)
		if end.Failure != "" || end.Health.JobID != "job_1" || end.Health.Status != status.JobSucceeded {
			t.Errorf("drain timeout %s: the update was finished with %+v", given, end)
		}
	}
}
