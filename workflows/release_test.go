package workflows

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
)

// A release deploys its batches in order, each install's deploy_config a
// child workflow; a failure reaching the threshold halts it until it is
// resumed, when the failed install is deployed again. A status write the
// store did not take is said in its final status's message.
func TestReleaseHaltsAtTheThresholdUntilResumed(t *testing.T) {
	env := newEnv()
	registerActivities(env)
	env.RegisterWorkflow(Release)
	var mu sync.Mutex
	var statuses, deploys []string
	env.OnActivity(contract.LoadRelease, mockAny, "rel_1").Return(contract.ReleasePlan{
		Batches: [][]string{{"ins_1", "ins_2"}, {"ins_3"}}, FailureThreshold: 1}, nil)
	env.OnActivity(contract.NextMaintenanceWindow, mockAny, mockAny).Return(contract.Window{None: true}, nil)
	env.OnActivity(contract.BeginReleaseDeploy, mockAny, "rel_1", mockAny).Return(func(_ context.Context, _, inst string) (contract.ReleaseDeploy, error) {
		return contract.ReleaseDeploy{OperationID: "op-" + inst, WorkflowID: "install/" + inst + "/deploy_config"}, nil
	})
	env.RegisterWorkflowWithOptions(func(workflow.Context, contract.OperationInput) (contract.OperationResult, error) {
		return contract.OperationResult{}, nil
	}, workflow.RegisterOptions{Name: contract.WorkflowDeployConfig})
	env.OnWorkflow(contract.WorkflowDeployConfig, mockAny, mockAny).Return(func(_ workflow.Context, in contract.OperationInput) (contract.OperationResult, error) {
		mu.Lock()
		defer mu.Unlock()
		deploys = append(deploys, in.OperationID)
		return contract.OperationResult{Status: status.OpSucceeded}, nil
	})
	// ins_2 fails the first time (the store says why), then succeeds.
	failed := false
	env.OnActivity(contract.FinishReleaseDeploy, mockAny, "rel_1", mockAny, mockAny, "").Return(func(_ context.Context, _, inst, _, _ string) (string, error) {
		if inst == "ins_2" && !failed {
			failed = true
			return "apply failed", nil
		}
		return "", nil
	})
	env.OnActivity(contract.SetReleaseStatus, mockAny, "rel_1", mockAny, mockAny).Return(func(_ context.Context, _ string, st status.Release, why string) error {
		mu.Lock()
		defer mu.Unlock()
		statuses = append(statuses, string(st)+": "+why)
		if st == status.ReleaseRunning {
			return temporal.NewNonRetryableApplicationError("database is down", "Unavailable", nil)
		}
		return nil
	})
	runReleaseSignalledAfterAnHour(t, env, contract.ReleaseResume)
	want := []string{"halted: apply failed", "running: ",
		"succeeded: not recorded: the release's status running (database is down)"}
	if !slices.Equal(statuses, want) {
		t.Fatalf("statuses %q, want %q", statuses, want)
	}
	if len(deploys) != 4 || deploys[2] != "op-ins_2" || deploys[3] != "op-ins_3" {
		t.Fatalf("deploys %q: want both of the first batch, ins_2 again once resumed, then ins_3", deploys)
	}
}

// A release cancelled while halted skips the installs it did not reach
// and ends cancelled.
func TestReleaseCancelledWhileHalted(t *testing.T) {
	env := newEnv()
	registerActivities(env)
	env.RegisterWorkflow(Release)
	env.OnActivity(contract.LoadRelease, mockAny, "rel_1").Return(contract.ReleasePlan{
		Batches: [][]string{{"ins_1"}, {"ins_2"}}, FailureThreshold: 1}, nil)
	env.OnActivity(contract.NextMaintenanceWindow, mockAny, "ins_1").Return(contract.Window{None: true}, nil)
	env.OnActivity(contract.BeginReleaseDeploy, mockAny, "rel_1", "ins_1").Return(contract.ReleaseDeploy{Failed: "no config version"}, nil)
	var statuses []string
	env.OnActivity(contract.SetReleaseStatus, mockAny, "rel_1", mockAny, mockAny).Return(func(_ context.Context, _ string, st status.Release, why string) error {
		statuses = append(statuses, string(st)+": "+why)
		return nil
	})
	env.OnActivity(contract.SkipReleaseInstalls, mockAny, "rel_1").Return(nil)
	runReleaseSignalledAfterAnHour(t, env, contract.ReleaseCancel)
	if want := []string{"halted: no config version", "cancelled: "}; !slices.Equal(statuses, want) {
		t.Fatalf("statuses %q, want %q", statuses, want)
	}
}

// runReleaseSignalledAfterAnHour runs release rel_1, which is sent action
// (contract.ReleaseResume…) an hour in; it must succeed and run every
// activity mocked.
func runReleaseSignalledAfterAnHour(t *testing.T, env *testsuite.TestWorkflowEnvironment, action string) {
	t.Helper()
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(contract.ReleaseSignal, contract.ReleaseControl{Action: action})
	}, time.Hour)
	env.ExecuteWorkflow(Release, contract.ReleaseInput{ReleaseID: "rel_1"})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	env.AssertExpectations(t)
}
