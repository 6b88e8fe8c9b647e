package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// A rollback the runner reports after its update was recorded succeeded
// (the new binary passed its health check, then could not be executed)
// makes the update failed with the runner's reason, and so does one that
// came before the workflow recorded the success; a report on another
// runner's update changes nothing.
func TestRollbackReportedAfterSuccessFailsTheUpdate(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		u, err := f.s.CreateRunnerUpdate(ctx, store.RunnerUpdate{ID: store.NewID("rupd"), OrgID: f.org.ID, InstallID: f.inst.ID, RunnerID: f.runner.ID,
			FromVersion: "v1", Version: "v2", Digest: "sha256:x", WorkflowID: "wf"})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.s.FinishRunnerUpdate(ctx, u.ID, status.RunnerUpdateSucceeded, ""); err != nil {
			t.Fatal(err)
		}
		report := func(runnerID, st string) store.RunnerUpdate {
			t.Helper()
			rep := protocol.RunnerUpdateReport{UpdateID: u.ID, Version: "v2", Status: st, Reason: "executing the new binary: exec format error"}
			if err := f.s.RecordRunnerUpdateReport(ctx, runnerID, rep); err != nil {
				t.Fatal(err)
			}
			got, err := f.s.GetRunnerUpdate(ctx, f.org.ID, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		if got := report("run_other", protocol.UpdateRolledBack); got.Status != status.RunnerUpdateSucceeded {
			t.Errorf("another runner's report made the update %s", got.Status)
		}
		got := report(f.runner.ID, protocol.UpdateRolledBack)
		if got.Status != status.RunnerUpdateFailed || !strings.Contains(got.Reason, "exec format error") ||
			!strings.Contains(got.Reason, "after the new version had passed its health check") {
			t.Errorf("after the runner reported its rollback: %s %q, want failed with its reason", got.Status, got.Reason)
		}

		// The report first, then the workflow's success.
		u2, err := f.s.CreateRunnerUpdate(ctx, store.RunnerUpdate{ID: store.NewID("rupd"), OrgID: f.org.ID, InstallID: f.inst.ID, RunnerID: f.runner.ID,
			FromVersion: "v1", Version: "v3", Digest: "sha256:y", WorkflowID: "wf2"})
		if err != nil {
			t.Fatal(err)
		}
		u = u2
		report(f.runner.ID, protocol.UpdateRolledBack)
		if st, err := f.s.SucceedRunnerUpdate(ctx, u2.ID); err != nil || st != status.RunnerUpdateFailed {
			t.Fatalf("success after a reported rollback recorded %q, %v; want failed", st, err)
		}
		if got, _ := f.s.GetRunnerUpdate(ctx, f.org.ID, u2.ID); got.Status != status.RunnerUpdateFailed || !strings.Contains(got.Reason, "exec format error") {
			t.Errorf("update %s %q, want failed with the runner's reason", got.Status, got.Reason)
		}
		if st, err := f.s.SucceedRunnerUpdate(ctx, u2.ID); err != nil || st != status.RunnerUpdateFailed {
			t.Errorf("a retried success recorded %q, %v; want failed still", st, err)
		}
	})
}

// A runner reporting the version an update of it is moving to is on trial until a noop job succeeds
// on that version; the old version, another runner, or an update that ended is not.
func TestRunnerHealthCheckPending(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		pending := func(runnerID, version string) bool {
			t.Helper()
			p, err := f.s.RunnerHealthCheckPending(ctx, runnerID, version)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		if pending(f.runner.ID, "v2") {
			t.Fatal("on trial with no update")
		}
		if _, err := f.s.CreateRunnerUpdate(ctx, store.RunnerUpdate{ID: store.NewID("rupd"), OrgID: f.org.ID, InstallID: f.inst.ID,
			RunnerID: f.runner.ID, FromVersion: "v1", Version: "v2", Digest: "sha256:x", WorkflowID: "wf"}); err != nil {
			t.Fatal(err)
		}
		if !pending(f.runner.ID, "v2") || pending(f.runner.ID, "v1") || pending("run_other", "v2") {
			t.Fatal("want only the runner, at the update's version, on trial")
		}
		j := f.enqueue(t, "health")
		if c, err := f.s.ClaimJob(ctx, f.runner.ID, time.Minute, store.Claimant{Version: "v2"}); err != nil || c == nil || c.ID != j.ID {
			t.Fatalf("claim: %+v %v", c, err)
		}
		if !pending(f.runner.ID, "v2") {
			t.Error("off trial while the health job runs")
		}
		if err := f.s.CompleteJob(ctx, f.runner.ID, j.ID, protocol.CompleteRequest{Attempt: 1, Status: protocol.StatusSucceeded}); err != nil {
			t.Fatal(err)
		}
		if pending(f.runner.ID, "v2") {
			t.Error("still on trial after a noop succeeded on v2")
		}
		u3, err := f.s.CreateRunnerUpdate(ctx, store.RunnerUpdate{ID: store.NewID("rupd"), OrgID: f.org.ID, InstallID: f.inst.ID,
			RunnerID: f.runner.ID, FromVersion: "v2", Version: "v3", Digest: "sha256:y", WorkflowID: "wf3"})
		if err != nil {
			t.Fatal(err)
		}
		if !pending(f.runner.ID, "v3") {
			t.Error("not on trial at the next update's version, though the noop ran on v2")
		}
		if err := f.s.FinishRunnerUpdate(ctx, u3.ID, status.RunnerUpdateFailed, "rolled back"); err != nil {
			t.Fatal(err)
		}
		if pending(f.runner.ID, "v3") {
			t.Error("still on trial after the update ended")
		}
	})
}
