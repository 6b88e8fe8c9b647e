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
	return workflowResult[contract.ActionRunResult](t, env)
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
	cancelled := mockJobUntilCancelled(env, "job_a", false)
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Second)
	env.ExecuteWorkflow(ActionRun, contract.ActionRunInput{RunID: "act_1"})
	if *cancelled != "workflow cancelled" || rec.steps[0].Status != status.JobCancelled || rec.runEnd != status.JobCancelled || len(rec.keys) != 1 {
		t.Fatalf("cancel reason %q, steps %+v, run %s, enqueued %v", *cancelled, rec.steps, rec.runEnd, rec.keys)
	}
}

// A scheduled exclusive run that found the install locked is recorded
// failed by RecordActionRun; its workflow then queues no step and records
// nothing more (its record, and the lock another holds, stay as they are).
func TestARefusedScheduledRunRunsNothing(t *testing.T) {
	env := newEnv()
	registerActivities(env)
	env.RegisterWorkflow(ActionRun)
	env.OnActivity(contract.RecordActionRun, mockAny, "ins_1", "backup", "default-test-workflow-id").Return("act_9", nil)
	env.OnActivity(contract.LoadActionRun, mockAny, "act_9").Return(contract.ActionRunPlan{RunID: "act_9", InstallID: "ins_1",
		Action: "backup", Steps: []string{"dump"}, StepTimeoutMS: 1000, Ended: string(status.JobFailed)}, nil)
	queued, finished := 0, 0
	env.OnActivity(contract.EnqueueActionStepJob, mockAny, mockAny, mockAny, mockAny).Return(
		func(context.Context, string, int, string) (contract.JobRef, error) {
			queued++
			return contract.JobRef{JobID: "job_a", Created: true}, nil
		}).Maybe()
	env.OnActivity(contract.FinishActionRun, mockAny, mockAny, mockAny, mockAny).Return(
		func(context.Context, string, status.Job, string) error {
			finished++
			return nil
		}).Maybe()
	env.ExecuteWorkflow(ActionRun, contract.ActionRunInput{InstallID: "ins_1", Action: "backup"})
	res := actionResult(t, env)
	if res.RunID != "act_9" || res.Status != string(status.JobFailed) || queued != 0 || finished != 0 {
		t.Fatalf("result %+v; %d step(s) queued, run finished %d time(s); want failed, none, none", res, queued, finished)
	}
}

// Whatever way a run ends (a step failed, its plan unreadable, cancelled),
// its end is recorded once: FinishActionRun is what releases the install's
// lock an exclusive run holds.
func TestEveryEndOfARunIsRecorded(t *testing.T) {
	t.Run("plan unreadable", func(t *testing.T) {
		env := newEnv()
		registerActivities(env)
		env.RegisterWorkflow(ActionRun)
		env.OnActivity(contract.LoadActionRun, mockAny, "act_1").Return(contract.ActionRunPlan{}, errors.New("config gone"))
		var ends []status.Job
		env.OnActivity(contract.FinishActionRun, mockAny, "act_1", mockAny, mockAny).Return(
			func(_ context.Context, _ string, st status.Job, _ string) error {
				ends = append(ends, st)
				return nil
			})
		env.ExecuteWorkflow(ActionRun, contract.ActionRunInput{RunID: "act_1"})
		if len(ends) != 1 || ends[0] != status.JobFailed {
			t.Fatalf("run ends recorded: %v, want one failed", ends)
		}
	})
	t.Run("step failed", func(t *testing.T) {
		env, rec := actionEnv(t, status.JobFailed)
		env.ExecuteWorkflow(ActionRun, contract.ActionRunInput{RunID: "act_1"})
		if rec.runEnd != status.JobFailed {
			t.Fatalf("run end recorded %q, want failed", rec.runEnd)
		}
	})
}
