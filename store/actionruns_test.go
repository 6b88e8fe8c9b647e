package store_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

const (
	secretRunInput  = "action-input-pw-91c2"
	secretRunOutput = "action-output-pw-4e7a"
)

// newRun records a manual run of "migrate" with two steps and a secret input.
func newRun(t *testing.T, ctx context.Context, f sealedFixture) store.ActionRun {
	t.Helper()
	run, err := f.s.CreateActionRun(ctx, store.ActionRun{OrgID: f.org.ID, InstallID: f.inst.ID, Action: "migrate", ConfigVersion: 3,
		Trigger: "manual", Inputs: map[string]string{"target": "v2"}, SensitiveInputs: map[string]string{"password": secretRunInput},
		WorkflowID: "install/" + f.inst.ID + "/action/migrate/x", StartedBy: "alice"}, []string{"plan", "apply"})
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != status.JobQueued || run.SensitiveInputs["password"] != secretRunInput {
		t.Fatalf("created %+v", run)
	}
	return run
}

func TestActionRunLifecycle(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		ctx, f := context.Background(), newSealedFixture(t, d)
		run := newRun(t, ctx, f)
		if err := f.s.StartActionRunStep(ctx, run.ID, 0, "job_1"); err != nil {
			t.Fatal(err)
		}
		exit := 0
		err := f.s.FinishActionRunStep(ctx, store.ActionRunStep{RunID: run.ID, StepIndex: 0, Status: status.JobSucceeded, ExitCode: &exit,
			Outputs: map[string]string{"plan": "3 changes"}, SensitiveOutputs: map[string]string{"token": secretRunOutput}})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.s.FinishActionRun(ctx, run.ID, status.JobFailed, "step apply: lost"); err != nil {
			t.Fatal(err)
		}
		got, err := f.s.GetActionRun(ctx, f.org.ID, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != status.JobFailed || got.Error != "step apply: lost" || got.FinishedAt == nil || !store.ActionRunDone(got) ||
			got.Inputs["target"] != "v2" || got.SensitiveInputs["password"] != secretRunInput || got.StartedBy != "alice" {
			t.Errorf("run read back %+v", got)
		}
		steps, err := f.s.ListActionRunSteps(ctx, run.ID)
		if err != nil || len(steps) != 2 {
			t.Fatalf("steps %+v, %v", steps, err)
		}
		s0, s1 := steps[0], steps[1]
		if s0.Name != "plan" || s0.Status != status.JobSucceeded || *s0.JobID != "job_1" || *s0.ExitCode != 0 || s0.StartedAt == nil ||
			s0.Outputs["plan"] != "3 changes" || s0.SensitiveOutputs["token"] != secretRunOutput {
			t.Errorf("step 0 %+v", s0)
		}
		if s1.Name != "apply" || s1.Status != store.ActionStepSkipped || s1.JobID != nil {
			t.Errorf("step 1 %+v, want skipped", s1)
		}
		dump := storetest.DatabaseBytes(t, f.s)
		if !bytes.Contains(dump, []byte("3 changes")) {
			t.Fatal("the dump does not hold a plain output: not a dump of this database")
		}
		for _, secret := range []string{secretRunInput, secretRunOutput} {
			if bytes.Contains(dump, []byte(secret)) {
				t.Errorf("%s is in the database's bytes", secret)
			}
		}
	})
}

func TestActionRunsListNewestFirstPerAction(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		ctx, f := context.Background(), newSealedFixture(t, d)
		first := newRun(t, ctx, f)
		time.Sleep(10 * time.Millisecond)
		second := newRun(t, ctx, f)
		other, err := f.s.CreateActionRun(ctx, store.ActionRun{OrgID: f.org.ID, InstallID: f.inst.ID, Action: "backup",
			Trigger: "cron", WorkflowID: "w"}, []string{"dump"})
		if err != nil {
			t.Fatal(err)
		}
		runs, err := f.s.ListActionRuns(ctx, f.org.ID, f.inst.ID, "migrate", 10)
		if err != nil || len(runs) != 2 || runs[0].ID != second.ID || runs[1].ID != first.ID {
			t.Fatalf("runs %+v, %v; want %s then %s", runs, err, second.ID, first.ID)
		}
		if _, err := f.s.GetActionRun(ctx, "org_other", other.ID); err == nil {
			t.Error("another org read the run")
		}
		if err := f.s.StartActionRunStep(ctx, other.ID, 5, "job_x"); err == nil {
			t.Error("started a step the run does not have")
		}
	})
}

// A step's job tells its run and who started it from its key, which starts
// with the run's workflow ID, for a manual run and a scheduled one alike
// (whose workflow ID is the schedule's and a time, not the run's ID).
func TestJobOriginOfActionRunSteps(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		ctx, f := context.Background(), newSealedFixture(t, d)
		manual := newRun(t, ctx, f)
		cronWF := "install/" + f.inst.ID + "/action/tick/cron-2026-11-27T23:38:00Z"
		cron, err := f.s.CreateActionRun(ctx, store.ActionRun{OrgID: f.org.ID, InstallID: f.inst.ID, Action: "tick", ConfigVersion: 1,
			Trigger: "cron", WorkflowID: cronWF}, []string{"tick"})
		if err != nil {
			t.Fatal(err)
		}
		for key, want := range map[string][2]string{
			manual.WorkflowID + "/step-0":                            {manual.ID, "alice"},
			cronWF + "/step-0":                                       {cron.ID, ""},
			"install/" + f.inst.ID + "/action/tick/cron-gone/step-0": {"", ""},
		} {
			o, err := f.s.JobOrigin(ctx, store.Job{Key: key, InstallID: &f.inst.ID})
			if err != nil || o.ActionRunID != want[0] || o.StartedBy != want[1] || o.InstallID != f.inst.ID {
				t.Errorf("origin of %s: %+v, %v; want run %q started by %q", key, o, err, want[0], want[1])
			}
		}
	})
}

// A hook's run is found by its operation and step (a retried activity
// finds the run it recorded); manual runs are not.
func TestFindHookRun(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		ctx, f := context.Background(), newSealedFixture(t, d)
		newRun(t, ctx, f)
		if _, found, err := f.s.FindHookRun(ctx, "", ""); err != nil || found {
			t.Fatalf("a manual run found as a hook's (%v, %v)", found, err)
		}
		hook, err := f.s.CreateActionRun(ctx, store.ActionRun{OrgID: f.org.ID, InstallID: f.inst.ID, Action: "migrate", ConfigVersion: 3,
			Trigger: "before", WorkflowID: "install/" + f.inst.ID + "/action/migrate/h", OperationID: "op_1", OperationStep: "before:migrate"},
			[]string{"plan"})
		if err != nil {
			t.Fatal(err)
		}
		got, found, err := f.s.FindHookRun(ctx, "op_1", "before:migrate")
		if err != nil || !found || got.ID != hook.ID || got.Trigger != "before" || got.OperationStep != "before:migrate" {
			t.Fatalf("found %+v (%v, %v); want the hook's run %s", got, found, err, hook.ID)
		}
		if _, found, err := f.s.FindHookRun(ctx, "op_1", "after:migrate"); err != nil || found {
			t.Fatalf("another step's run found (%v, %v)", found, err)
		}
	})
}
