package workflows

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
)

// These tests exercise RunJob's decisions (retry a lost attempt, give up
// after the policy's attempts, cancel the job when the workflow is
// cancelled) in Temporal's test environment. The activities themselves run
// against real PostgreSQL, gateway and runners in the e2e package.

// newEnv is a test environment whose workflow tasks may take long on a
// loaded machine (the default deadlock detection gives them a second, the
// test three).
func newEnv() *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	env.SetTestTimeout(time.Minute)
	return env
}

func commandEnv(t *testing.T) *testsuite.TestWorkflowEnvironment {
	env := newEnv()
	registerActivities(env)
	env.RegisterWorkflow(InstallCommand)
	env.OnActivity(contract.EnqueueCommandJob, mockAny, "cmd_1", mockAny).Return(contract.JobRef{JobID: "job_1", Created: true}, nil)
	return env
}

var mockAny = mock.Anything

func outputs(t *testing.T, o protocol.CommandOutputs) json.RawMessage {
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestInstallCommandRetriesLostAttempts(t *testing.T) {
	env := commandEnv(t)
	exit := 0
	awaits := 0
	env.OnActivity(contract.AwaitJob, mockAny, "job_1", true).Return(func(_ context.Context, _ string, _ bool) (contract.JobResult, error) {
		awaits++
		if awaits == 1 {
			return contract.JobResult{JobID: "job_1", Status: status.JobLost, Attempt: 1}, nil
		}
		return contract.JobResult{JobID: "job_1", Status: status.JobSucceeded, Attempt: 2, ExitCode: &exit,
			Outputs: outputs(t, protocol.CommandOutputs{Output: "hi\n"})}, nil
	})
	retried := 0
	env.OnActivity(contract.RetryJob, mockAny, "job_1", 1).Return(func(_ context.Context, _ string, _ int) error { retried++; return nil })
	var finished contract.CommandResult
	env.OnActivity(contract.FinishCommand, mockAny, "cmd_1", mockAny).Return(func(_ context.Context, _ string, r contract.CommandResult) error {
		finished = r
		return nil
	})
	env.ExecuteWorkflow(InstallCommand, contract.InstallCommandInput{InstallID: "ins_1", CommandID: "cmd_1", TimeoutMS: 1000})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res contract.InstallCommandResult
	env.GetWorkflowResult(&res)
	if retried != 1 || res.Attempts != 2 || res.Status != status.JobSucceeded || res.Output != "hi\n" || finished.Output != "hi\n" {
		t.Fatalf("retried %d times, result %+v, recorded %+v", retried, res, finished)
	}
}

func TestInstallCommandGivesUpAfterThreeLostAttempts(t *testing.T) {
	env := commandEnv(t)
	attempt := 0
	env.OnActivity(contract.AwaitJob, mockAny, "job_1", true).Return(func(_ context.Context, _ string, _ bool) (contract.JobResult, error) {
		attempt++
		return contract.JobResult{JobID: "job_1", Status: status.JobLost, Attempt: attempt}, nil
	})
	env.OnActivity(contract.RetryJob, mockAny, "job_1", mockAny).Return(nil)
	var finished contract.CommandResult
	env.OnActivity(contract.FinishCommand, mockAny, "cmd_1", mockAny).Return(func(_ context.Context, _ string, r contract.CommandResult) error {
		finished = r
		return nil
	})
	env.ExecuteWorkflow(InstallCommand, contract.InstallCommandInput{InstallID: "ins_1", CommandID: "cmd_1"})
	err := env.GetWorkflowError()
	if err == nil || attempt != 3 || finished.Status != status.JobFailed {
		t.Fatalf("err %v after %d attempts, recorded %+v; want a failure after 3", err, attempt, finished)
	}
}

func TestCancellingTheWorkflowCancelsTheJob(t *testing.T) {
	env := commandEnv(t)
	cancelled := mockJobUntilCancelled(env, "job_1", true)
	var finished contract.CommandResult
	env.OnActivity(contract.FinishCommand, mockAny, "cmd_1", mockAny).Return(func(_ context.Context, _ string, r contract.CommandResult) error {
		finished = r
		return nil
	})
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Second)
	env.ExecuteWorkflow(InstallCommand, contract.InstallCommandInput{InstallID: "ins_1", CommandID: "cmd_1"})
	if *cancelled != "workflow cancelled" || finished.Status != status.JobCancelled {
		t.Fatalf("cancel reason %q, recorded %+v", *cancelled, finished)
	}
}
