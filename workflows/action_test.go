package workflows

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
)

// actionEnv runs a three-step run whose step jobs end as ends says (by
// index); it records what the activities were asked to store.
type actionRecord struct {
	keys     []string
	steps    map[int]contract.JobResult
	runEnd   status.Job
	runError string
}

func actionEnv(t *testing.T, ends ...status.Job) (*testsuite.TestWorkflowEnvironment, *actionRecord) {
	env := newEnv()
	registerActivities(env)
	env.RegisterWorkflow(ActionRun)
	rec := &actionRecord{steps: map[int]contract.JobResult{}}
	env.OnActivity(contract.LoadActionRun, mockAny, "act_1").Return(contract.ActionRunPlan{RunID: "act_1", InstallID: "ins_1",
		Action: "migrate", Steps: []string{"plan", "apply", "verify"}, StepTimeoutMS: 1000}, nil)
	env.OnActivity(contract.EnqueueActionStepJob, mockAny, "act_1", mockAny, mockAny).Return(
		func(_ context.Context, _ string, i int, key string) (contract.JobRef, error) {
			rec.keys = append(rec.keys, key)
			return contract.JobRef{JobID: "job_" + string(rune('a'+i)), Created: true}, nil
		})
	exit := 0
	for i, end := range ends {
		env.OnActivity(contract.AwaitJob, mockAny, "job_"+string(rune('a'+i)), false).Return(contract.JobResult{
			JobID: "job_" + string(rune('a'+i)), Status: end, Attempt: 1, ExitCode: &exit}, nil)
	}
	env.OnActivity(contract.FinishActionStep, mockAny, "act_1", mockAny, mockAny).Return(
		func(_ context.Context, _ string, i int, r contract.JobResult) (status.Job, error) {
			rec.steps[i] = r
			return r.Status, nil
		})
	env.OnActivity(contract.FinishActionRun, mockAny, "act_1", mockAny, mockAny).Return(
		func(_ context.Context, _ string, st status.Job, why string) error {
			rec.runEnd, rec.runError = st, why
			return nil
		})
	return env, rec
}

func actionResult(t *testing.T, env *testsuite.TestWorkflowEnvironment) contract.ActionRunResult {
	t.Helper()
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res contract.ActionRunResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	return res
}

func TestActionRunRunsEveryStepInOrder(t *testing.T) {
	env, rec := actionEnv(t, status.JobSucceeded, status.JobSucceeded, status.JobSucceeded)
	env.ExecuteWorkflow(ActionRun, contract.ActionRunInput{RunID: "act_1", InstallID: "ins_1", Action: "migrate"})
	res := actionResult(t, env)
	if res.Status != string(status.JobSucceeded) || len(res.Steps) != 3 || rec.runEnd != status.JobSucceeded || len(rec.steps) != 3 {
		t.Fatalf("result %+v, recorded %+v", res, rec)
	}
	for i, key := range rec.keys {
		if want := contract.ActionStepJobKey("default-test-workflow-id", i); key != want {
			t.Errorf("step %d's job key %q, want %q", i, key, want)
		}
	}
}

func TestActionRunStopsAtTheFirstFailedStep(t *testing.T) {
	env, rec := actionEnv(t, status.JobSucceeded, status.JobFailed)
	env.ExecuteWorkflow(ActionRun, contract.ActionRunInput{RunID: "act_1"})
	res := actionResult(t, env)
	if res.Status != string(status.JobFailed) || rec.runEnd != status.JobFailed || rec.runError != "step apply failed" {
		t.Fatalf("result %+v, run recorded %s %q", res, rec.runEnd, rec.runError)
	}
	if len(rec.keys) != 2 || rec.steps[1].Status != status.JobFailed || *rec.steps[1].ExitCode != 0 {
		t.Fatalf("enqueued %v, steps recorded %+v; want verify never queued", rec.keys, rec.steps)
	}
	if _, ran := res.Steps["verify"]; ran {
		t.Errorf("verify ran: %+v", res.Steps)
	}
}

func TestActionRunFromAScheduleIsRecordedFirst(t *testing.T) {
	env, rec := actionEnv(t, status.JobSucceeded, status.JobSucceeded, status.JobSucceeded)
	env.OnActivity(contract.RecordActionRun, mockAny, "ins_1", "migrate", "default-test-workflow-id").Return("act_1", nil)
	env.ExecuteWorkflow(ActionRun, contract.ActionRunInput{InstallID: "ins_1", Action: "migrate"})
	res := actionResult(t, env)
	if res.RunID != "act_1" || res.Status != string(status.JobSucceeded) || rec.runEnd != status.JobSucceeded {
		t.Fatalf("result %+v, run recorded %s", res, rec.runEnd)
	}
}

func TestCancellingAnActionRunRecordsItCancelled(t *testing.T) {
	env, rec := actionEnv(t)
	env.OnActivity(contract.AwaitJob, mockAny, "job_a", false).Return(func(_ context.Context, _ string, _ bool) (contract.JobResult, error) {
		time.Sleep(50 * time.Millisecond)
		return contract.JobResult{}, errors.New("still waiting")
	})
	cancelled := ""
	env.OnActivity(contract.CancelJob, mockAny, "job_a", mockAny).Return(func(_ context.Context, _ string, reason string) error {
		cancelled = reason
		return nil
	})
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Second)
	env.ExecuteWorkflow(ActionRun, contract.ActionRunInput{RunID: "act_1"})
	if cancelled != "workflow cancelled" || rec.steps[0].Status != status.JobCancelled || rec.runEnd != status.JobCancelled || len(rec.keys) != 1 {
		t.Fatalf("cancel reason %q, steps %+v, run %s, enqueued %v", cancelled, rec.steps, rec.runEnd, rec.keys)
	}
}
