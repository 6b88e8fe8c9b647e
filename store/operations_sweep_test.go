package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// An operation its workflow left unfinished is listed once old enough, and
// abandoning it fails it and its started steps, skips the others, and frees
// the install; one finished meanwhile is left as it ended.
func TestAbandonOperationFreesTheInstall(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		start := func() store.InstallOperation {
			op, err := f.s.StartOperation(ctx, store.InstallOperation{OrgID: f.org.ID, InstallID: f.inst.ID, Kind: store.OpProvision,
				ConfigVersion: 1, ApprovalMode: status.ApproveAll, WorkflowID: "wf"})
			if err != nil {
				t.Fatal(err)
			}
			return op
		}
		op := start()
		if err := f.s.AddSteps(ctx, op.ID, []store.NewStep{{Name: "sandbox"}, {Name: "web", After: []string{"sandbox"}}}); err != nil {
			t.Fatal(err)
		}
		now, running := time.Now(), status.StepApplying
		if err := f.s.UpdateStep(ctx, op.ID, "sandbox", store.StepChange{Status: &running, StartedAt: &now}); err != nil {
			t.Fatal(err)
		}
		if ops, err := f.s.ListUnfinishedOperations(ctx, time.Now().Add(-time.Hour)); err != nil || len(ops) != 0 {
			t.Fatalf("unfinished operations over an hour old: %d, %v; want none", len(ops), err)
		}
		if ops, err := f.s.ListUnfinishedOperations(ctx, time.Now().Add(time.Second)); err != nil || len(ops) != 1 || ops[0].ID != op.ID {
			t.Fatalf("unfinished operations: %+v, %v; want %s", ops, err, op.ID)
		}
		if _, err := f.s.StartOperation(ctx, store.InstallOperation{OrgID: f.org.ID, InstallID: f.inst.ID, Kind: store.OpDeprovision,
			ApprovalMode: status.ApproveAll, WorkflowID: "wf2"}); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("a second operation while one runs: %v, want ErrConflict", err)
		}
		if done, err := f.s.AbandonOperation(ctx, op.ID, "its workflow ended", status.InstallFailed); err != nil || !done {
			t.Fatalf("abandon: %v %v", done, err)
		}
		got, err := f.s.GetOperation(ctx, f.org.ID, op.ID)
		if err != nil || got.Status != status.OpFailed || got.Error != "its workflow ended" || got.FinishedAt == nil {
			t.Fatalf("abandoned operation: %+v, %v", got, err)
		}
		for _, st := range got.Steps {
			want := map[string]status.Step{"sandbox": status.StepFailed, "web": status.StepSkipped}[st.Name]
			if st.Status != want || st.FinishedAt == nil {
				t.Errorf("step %s: %s (finished %v), want %s", st.Name, st.Status, st.FinishedAt, want)
			}
		}
		if inst, _ := f.s.GetInstall(ctx, f.org.ID, f.inst.ID); inst.Status != status.InstallFailed {
			t.Errorf("install %s, want failed", inst.Status)
		}
		next := start() // the install is free
		if err := f.s.FinishOperation(ctx, next.ID, status.OpSucceeded, "", status.InstallActive); err != nil {
			t.Fatal(err)
		}
		if done, err := f.s.AbandonOperation(ctx, next.ID, "late", ""); err != nil || done {
			t.Fatalf("abandoning a finished operation: %v %v, want nothing done", done, err)
		}
		if got, _ := f.s.GetOperation(ctx, f.org.ID, next.ID); got.Status != status.OpSucceeded {
			t.Fatalf("a finished operation abandoned: %s, want it left succeeded", got.Status)
		}
	})
}
