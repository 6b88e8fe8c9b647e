package workflows

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/outpost-dev/outpost/contract"
)

// workflowResult is the result of the workflow env ran, which must have
// succeeded.
func workflowResult[T any](t *testing.T, env *testsuite.TestWorkflowEnvironment) T {
	t.Helper()
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res T
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	return res
}

// mockJobUntilCancelled makes job's wait never end and returns where the
// reason of the job's cancel lands.
func mockJobUntilCancelled(env *testsuite.TestWorkflowEnvironment, job string, withOutputs bool) *string {
	env.OnActivity(contract.AwaitJob, mockAny, job, withOutputs).Return(func(_ context.Context, _ string, _ bool) (contract.JobResult, error) {
		time.Sleep(50 * time.Millisecond)
		return contract.JobResult{}, errors.New("still waiting")
	})
	cancelled := new(string)
	env.OnActivity(contract.CancelJob, mockAny, job, mockAny).Return(func(_ context.Context, _ string, reason string) error {
		*cancelled = reason
		return nil
	})
	return cancelled
}
