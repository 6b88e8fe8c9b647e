package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

func exclusiveRun(ctx context.Context, f fixture) (store.ActionRun, error) {
	return f.s.CreateActionRun(ctx, store.ActionRun{OrgID: f.org.ID, InstallID: f.inst.ID, Action: "backup", ConfigVersion: 1,
		Trigger: "manual", WorkflowID: "install/" + f.inst.ID + "/action/backup/x", Exclusive: true}, []string{"dump", "upload"})
}

func provision(ctx context.Context, f fixture) (store.InstallOperation, error) {
	return f.s.StartOperation(ctx, store.InstallOperation{OrgID: f.org.ID, InstallID: f.inst.ID, Kind: store.OpProvision,
		WorkflowID: "install/" + f.inst.ID + "/provision"})
}

// An exclusive run holds the install's lock from its record to its end: an
// operation, an inputs change or another exclusive run is refused meanwhile
// (naming the run); a run that is not exclusive is not; once it has ended
// (or been abandoned) the install takes an operation, and an exclusive run
// is refused while that holds it.
func TestExclusiveRunHoldsTheInstallsLock(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		run, err := exclusiveRun(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := provision(ctx, f); !errors.Is(err, store.ErrConflict) || !strings.Contains(err.Error(), "busy with exclusive action run "+run.ID) {
			t.Fatalf("provision beside the run: %v; want a conflict naming it", err)
		}
		if _, err := exclusiveRun(ctx, f); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("a second exclusive run: %v; want a conflict", err)
		}
		plain := store.ActionRun{OrgID: f.org.ID, InstallID: f.inst.ID, Action: "check", ConfigVersion: 1, Trigger: "manual", WorkflowID: "w"}
		if _, err := f.s.CreateActionRun(ctx, plain, []string{"a"}); err != nil {
			t.Fatalf("a run that is not exclusive: %v", err)
		}
		if err := f.s.FinishActionRun(ctx, run.ID, status.JobCancelled, "cancelled"); err != nil {
			t.Fatal(err)
		}
		op, err := provision(ctx, f)
		if err != nil {
			t.Fatalf("provision once the run ended: %v", err)
		}
		if _, err := exclusiveRun(ctx, f); !errors.Is(err, store.ErrConflict) || !strings.Contains(err.Error(), "busy with operation "+op.ID) {
			t.Fatalf("an exclusive run beside the provision: %v; want a conflict naming it", err)
		}
		if err := f.s.FinishOperation(ctx, op.ID, status.OpFailed, "x", ""); err != nil {
			t.Fatal(err)
		}

		// Abandoned by the sweeper: failed, its running step failed, the rest skipped, the install freed.
		run, err = exclusiveRun(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.s.StartActionRunStep(ctx, run.ID, 0, "job_1"); err != nil {
			t.Fatal(err)
		}
		if runs, err := f.s.ListUnfinishedExclusiveRuns(ctx, time.Now().Add(time.Second)); err != nil || len(runs) != 1 || runs[0].ID != run.ID {
			t.Fatalf("unfinished exclusive runs: %+v %v; want only %s", runs, err, run.ID)
		}
		if done, err := f.s.AbandonActionRun(ctx, run.ID, "its workflow ended"); err != nil || !done {
			t.Fatalf("abandon: %v %v", done, err)
		}
		if done, err := f.s.AbandonActionRun(ctx, run.ID, "again"); err != nil || done {
			t.Fatalf("abandon a finished run: %v %v; want nothing done", done, err)
		}
		got, _ := f.s.GetActionRunByID(ctx, run.ID)
		steps, _ := f.s.ListActionRunSteps(ctx, run.ID)
		if got.Status != status.JobFailed || got.Error != "its workflow ended" || steps[0].Status != status.JobFailed || steps[1].Status != store.ActionStepSkipped {
			t.Fatalf("abandoned run %+v, steps %+v", got, steps)
		}
		if _, err := provision(ctx, f); err != nil {
			t.Fatalf("provision once the run was abandoned: %v", err)
		}
	})
}

// A health action's result is a row beside the runner's: the gateway's
// forgetting of helm components leaves it, it reads unknown past its
// stale_after, and ForgetCheckHealth drops the checks a config no longer has.
func TestCheckHealthBesideComponentHealth(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		stale := time.Now().Add(time.Hour)
		res := []store.CheckResult{{Check: "action:probe", State: protocol.HealthDegraded, Object: "action probe (run act_1)",
			Condition: "replica lag", StaleAfter: &stale}}
		if err := f.s.RecordCheckHealth(ctx, f.org.ID, f.inst.ID, "action:probe", res); err != nil {
			t.Fatal(err)
		}
		web := protocol.ComponentHealth{Component: "web", State: protocol.HealthHealthy}
		if err := f.s.RecordComponentHealth(ctx, f.org.ID, f.inst.ID, []protocol.ComponentHealth{web}); err != nil {
			t.Fatal(err)
		}
		if err := f.s.ForgetComponentHealth(ctx, f.inst.ID, nil); err != nil { // no helm component any more
			t.Fatal(err)
		}
		comps, err := f.s.ComponentHealthOf(ctx, f.inst.ID)
		if err != nil {
			t.Fatal(err)
		}
		c := comps[f.inst.ID]
		if len(c) != 1 || c[0].Component != "action:probe" || c[0].Source != "action:probe" || c[0].StaleAfter == nil {
			t.Fatalf("health after the helm components were forgotten: %+v; want the action's check alone", c)
		}
		now := time.Now()
		runner := f.runner
		runner.LastSeenAt = &now
		if h := store.SummarizeHealth(c, &runner, now, store.DefaultOnlineWindow); h.State != protocol.HealthDegraded || h.Condition != "replica lag" {
			t.Fatalf("install health %+v; want degraded, replica lag", h)
		}
		later := stale.Add(time.Minute)
		runner.LastSeenAt = &later
		if h := store.SummarizeHealth(c, &runner, later, store.DefaultOnlineWindow); h.State != protocol.HealthUnknown ||
			!strings.Contains(h.Condition, "no result from action:probe since") {
			t.Fatalf("install health past stale_after %+v; want unknown, saying why", h)
		}
		if seen := store.ComponentHealthAsSeen(c[0], &runner, later, store.DefaultOnlineWindow); seen.State != protocol.HealthUnknown || !seen.Since.Equal(*c[0].StaleAfter) {
			t.Fatalf("the check past stale_after %+v; want unknown since then", seen)
		}
		if err := f.s.ForgetCheckHealth(ctx, f.inst.ID, []string{"action:other"}); err != nil {
			t.Fatal(err)
		}
		if comps, _ := f.s.ComponentHealthOf(ctx, f.inst.ID); len(comps[f.inst.ID]) != 0 {
			t.Fatalf("health after the config dropped the check: %+v", comps[f.inst.ID])
		}
	})
}
