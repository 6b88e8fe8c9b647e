package store_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

const secretRunbookInput = "runbook-input-pw-5d1f"

// TestRunbookRunFailsAndResumes: a run's steps start, one fails, the run is
// resumed (the succeeded step stays, the rest are pending again), waits at
// its gate, is approved and succeeds; its secret input is sealed.
func TestRunbookRunFailsAndResumes(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		ctx, f := context.Background(), newSealedFixture(t, d)
		run, err := f.s.CreateRunbookRun(ctx, store.RunbookRun{OrgID: f.org.ID, InstallID: f.inst.ID, Runbook: "release", ConfigVersion: 2,
			Inputs: map[string]string{"version": "v2"}, SensitiveInputs: map[string]string{"token": secretRunbookInput},
			WorkflowID: "install/" + f.inst.ID + "/runbook/release/x", StartedBy: "alice"},
			[]store.RunbookRunStep{{Name: "migrate", Kind: "action", Target: "migrate"}, {Name: "api", Kind: "deploy", Target: "api"},
				{Name: "gate", Kind: "approval"}})
		if err != nil || run.Status != status.JobQueued {
			t.Fatalf("created %+v, %v", run, err)
		}
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(f.s.StartRunbookStep(ctx, run.ID, 0, store.RunbookStepStart{Status: status.JobRunning, ActionRunID: "act_1"}))
		must(f.s.FinishRunbookStep(ctx, run.ID, 0, status.JobSucceeded, ""))
		must(f.s.StartRunbookStep(ctx, run.ID, 1, store.RunbookStepStart{Status: status.JobRunning, OperationID: "op_1"}))
		must(f.s.FinishRunbookStep(ctx, run.ID, 1, status.JobFailed, "operation op_1 failed"))
		must(f.s.FinishRunbookRun(ctx, run.ID, status.JobFailed, "step api failed"))
		if _, err := f.s.ApproveRunbookStep(ctx, run.ID, "bob"); !errors.Is(err, store.ErrConflict) {
			t.Errorf("approving a run that waits at no gate: %v, want a conflict", err)
		}
		steps, err := f.s.ListRunbookRunSteps(ctx, run.ID)
		if err != nil || len(steps) != 3 || steps[0].ActionRunID != "act_1" || steps[1].OperationID != "op_1" ||
			steps[1].Error != "operation op_1 failed" || steps[2].Status != store.ActionStepSkipped {
			t.Fatalf("steps after the failure %+v, %v", steps, err)
		}

		resumed, err := f.s.ResumeRunbookRun(ctx, f.org.ID, run.ID)
		if err != nil || resumed.Status != status.JobQueued || resumed.FinishedAt != nil || resumed.Error != "" {
			t.Fatalf("resumed %+v, %v", resumed, err)
		}
		if _, err := f.s.ResumeRunbookRun(ctx, f.org.ID, run.ID); !errors.Is(err, store.ErrConflict) {
			t.Errorf("resuming a queued run: %v, want a conflict", err)
		}
		steps, _ = f.s.ListRunbookRunSteps(ctx, run.ID)
		if steps[0].Status != status.JobSucceeded || steps[1].Status != store.ActionStepPending || steps[1].Error != "" ||
			steps[2].Status != store.ActionStepPending {
			t.Fatalf("steps after the resume %+v", steps)
		}
		must(f.s.StartRunbookStep(ctx, run.ID, 1, store.RunbookStepStart{Status: status.JobRunning, OperationID: "op_2"}))
		must(f.s.FinishRunbookStep(ctx, run.ID, 1, status.JobSucceeded, ""))
		must(f.s.StartRunbookStep(ctx, run.ID, 2, store.RunbookStepStart{Status: store.RunbookWaitingApproval}))
		got, _ := f.s.GetRunbookRun(ctx, f.org.ID, run.ID)
		if got.Status != store.RunbookWaitingApproval || got.SensitiveInputs["token"] != secretRunbookInput || got.Inputs["version"] != "v2" {
			t.Errorf("run at the gate %+v", got)
		}
		gate, err := f.s.ApproveRunbookStep(ctx, run.ID, "bob")
		if err != nil || gate.StepIndex != 2 || gate.ApprovedBy != "bob" {
			t.Fatalf("approve: %+v, %v", gate, err)
		}
		must(f.s.FinishRunbookStep(ctx, run.ID, 2, status.JobSucceeded, ""))
		must(f.s.FinishRunbookRun(ctx, run.ID, status.JobSucceeded, ""))
		runs, err := f.s.ListRunbookRuns(ctx, f.org.ID, f.inst.ID, "release", 10)
		if err != nil || len(runs) != 1 || runs[0].Status != status.JobSucceeded || !store.RunbookRunDone(runs[0]) {
			t.Errorf("runs %+v, %v", runs, err)
		}
		if _, err := f.s.GetRunbookRun(ctx, "org_other", run.ID); err == nil {
			t.Error("another org read the run")
		}
		dump := storetest.DatabaseBytes(t, f.s)
		if !bytes.Contains(dump, []byte("operation op_1")) && !bytes.Contains(dump, []byte("op_2")) {
			t.Fatal("the dump holds nothing of the run: not a dump of this database")
		}
		if bytes.Contains(dump, []byte(secretRunbookInput)) {
			t.Error("the run's secret input is in the database's bytes")
		}
	})
}
