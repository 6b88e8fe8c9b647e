package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/contract/status"
)

// An exclusive action's run holds the install's lock from its record to its
// end (docs/architecture/action-runs.md, "Exclusive runs"): an operation
// started meanwhile is refused (409) as it would be beside another
// operation, and so is a second exclusive run; a run of a non-exclusive
// action runs beside it. Once it has ended the install takes an operation,
// and while that operation runs an exclusive run is refused in turn.
func TestExclusiveRunHoldsTheInstall(t *testing.T) {
	s := newStack(t, stackOptions{})
	s.startRunner()
	s.syncConfig("testdata/health-app")
	inst := s.install.ID
	hold := s.runAction("hold", nil)
	if !hold.Exclusive {
		t.Fatalf("run %+v, want exclusive", hold)
	}
	var e struct{ Message string }
	if code := s.do("POST", "/v1/installs/"+inst+"/provision", nil, &e); code != http.StatusConflict ||
		!strings.Contains(e.Message, "busy with exclusive action run "+hold.ID) {
		t.Fatalf("provision beside the exclusive run: %d %q, want 409 naming the run", code, e.Message)
	}
	if code := s.do("POST", "/v1/installs/"+inst+"/actions/hold/runs", map[string]any{}, &e); code != http.StatusConflict {
		t.Fatalf("a second exclusive run: %d %q, want 409", code, e.Message)
	}
	beside := s.runAction("probe", nil)
	if done := s.waitActionRun(hold.ID, 2*time.Minute); done.Status != "succeeded" {
		t.Fatalf("exclusive run %+v", done)
	}
	if done := s.waitActionRun(beside.ID, time.Minute); done.Status != "succeeded" || done.Exclusive {
		t.Fatalf("the run beside it %+v, want succeeded, not exclusive", done)
	}
	op := s.startOp(inst, "/provision", nil) // free once the exclusive run has ended
	if code := s.do("POST", "/v1/installs/"+inst+"/actions/hold/runs", map[string]any{}, &e); code != http.StatusConflict ||
		!strings.Contains(e.Message, "busy with operation "+op.ID) {
		t.Fatalf("an exclusive run beside the provision: %d %q, want 409 naming the operation", code, e.Message)
	}
	if got := s.waitOp(inst, op.ID, 5*time.Minute); got.Status != status.OpSucceeded {
		t.Fatalf("provision after the exclusive run: %s %q", got.Status, got.Error)
	}
}

// An exclusive run whose workflow is terminated is finished by the worker's
// sweeper, as an operation's is: failed, saying so, and the install freed.
func TestSweeperFinishesAnExclusiveRunWhoseWorkflowClosed(t *testing.T) {
	s := newStack(t, stackOptions{})
	s.startRunner()
	s.syncConfig("testdata/health-app")
	inst := s.install.ID
	s.worker.Stop()
	run := s.runAction("hold", nil)
	if err := s.client.TerminateWorkflow(context.Background(), run.WorkflowID, "", "by hand"); err != nil {
		t.Fatal(err)
	}
	s.startWorker()
	done := s.waitActionRun(run.ID, time.Minute)
	if done.Status != "failed" || !strings.Contains(done.Error, "ended (terminated) without finishing it") {
		t.Fatalf("run after its workflow was terminated: %s %q; want failed, saying so", done.Status, done.Error)
	}
	op := s.startOp(inst, "/provision", nil) // accepted: the install is free
	if got := s.waitOp(inst, op.ID, 5*time.Minute); got.Status != status.OpSucceeded {
		t.Fatalf("provision after the swept run: %s %q", got.Status, got.Error)
	}
}

// installHealth reads GET /installs/{id}/health of the stack's install.
func (s *stack) installHealth() wire.InstallHealth { return s.healthOf(s.install.ID) }

// healthOf reads GET /installs/{id}/health.
func (s *stack) healthOf(inst string) wire.InstallHealth {
	s.t.Helper()
	var h wire.InstallHealth
	s.get("/v1/installs/"+inst+"/health", &h)
	return h
}

// A health-check action run on the install's runner sets the install's
// health (docs/architecture/health.md, "Health-check actions"): a failed
// run unhealthy, naming the step and its last log line; a succeeded one
// healthy; one whose step says health=degraded, degraded with its reason.
// Each change is a transition of the check "action:probe"; outpostctl
// health shows the check like a component.
func TestHealthActionSetsTheInstallsHealth(t *testing.T) {
	s, c := newCLIStack(t)
	s.startRunner()
	s.syncConfig("testdata/health-app")
	for _, tc := range []struct{ mode, state, why string }{
		{"fail", "unhealthy", "step connect failed: "},
		{"ok", "healthy", "succeeded"},
		{"degraded", "degraded", "replica lag 40s"},
	} {
		run := s.waitActionRun(s.runAction("probe", map[string]string{"mode": tc.mode}).ID, 2*time.Minute)
		h := s.installHealth()
		last := map[string]string{"fail": ": db unreachable at db.internal:5432"}[tc.mode] // the failed step's last log line
		if h.Health.State != tc.state || h.Health.Component != "action:probe" || !strings.HasPrefix(h.Health.Condition, tc.why) ||
			!strings.HasSuffix(h.Health.Condition, last) || !strings.Contains(h.Health.Object, run.ID) {
			t.Fatalf("after a %s probe (run %s %s): install health %+v; want %s, %q", tc.mode, run.ID, run.Status, h.Health, tc.state, tc.why)
		}
		if len(h.Components) != 1 || h.Components[0].Source != "action:probe" || h.Components[0].StaleAfter != nil {
			t.Fatalf("components %+v; want the check action:probe, from the action, never stale (no cron)", h.Components)
		}
	}
	var seen []string
	for _, tr := range s.installHealth().Transitions {
		seen = append([]string{tr.From + "→" + tr.To}, seen...)
	}
	if got := strings.Join(seen, " "); got != "→unhealthy unhealthy→healthy healthy→degraded" {
		t.Errorf("transitions %s", got)
	}
	if out := c.ok("", "health", s.install.ID); !strings.Contains(out, "action:probe") || !strings.Contains(out, "degraded") ||
		!strings.Contains(out, "replica lag 40s") {
		t.Errorf("outpostctl health:\n%s", out)
	}
}

// A scheduled run of an exclusive action while another exclusive run holds
// the install is refused, as an operation would be: recorded failed, "not
// started", naming the holder, and no step runs. Cancelling the holder
// releases the install.
func TestScheduledExclusiveRunIsRefusedWhileTheInstallIsHeld(t *testing.T) {
	s := newStack(t, stackOptions{})
	s.startRunner()
	s.syncConfig("testdata/cron-lock-app")
	inst := s.install.ID
	s.provisioned(inst, 5*time.Minute) // makes the tick schedule
	hold := s.runAction("hold", nil)
	var refused wire.ActionRun
	waitFor(t, 150*time.Second, "a scheduled tick refused", func() bool {
		var list wire.ActionRunList
		s.do("GET", "/v1/installs/"+inst+"/actions/tick/runs", nil, &list)
		for _, r := range list.Runs {
			if r.CreatedAt.After(hold.CreatedAt) && r.FinishedAt != nil {
				refused = r
				return true
			}
		}
		return false
	})
	if refused.Status != "failed" || !strings.Contains(refused.Error, "not started: install") ||
		!strings.Contains(refused.Error, "busy with exclusive action run "+hold.ID) || refused.Trigger != "cron" {
		t.Fatalf("the tick beside the held install: %+v; want failed, not started, naming %s", refused, hold.ID)
	}
	s.waitWorkflowClosed(refused.WorkflowID, time.Minute)
	var full wire.ActionRun
	s.do("GET", "/v1/installs/"+inst+"/action-runs/"+refused.ID, nil, &full)
	if len(full.Steps) != 1 || full.Steps[0].Status != "skipped" || full.Steps[0].JobID != nil {
		t.Fatalf("refused run's steps %+v; want its step skipped, never queued", full.Steps)
	}
	s.replay(refused.WorkflowID)
	var e struct{ Message string }
	if code := s.do("POST", "/v1/installs/"+inst+"/action-runs/"+hold.ID+"/cancel", nil, &e); code != http.StatusAccepted {
		t.Fatalf("cancel the holder: %d %q", code, e.Message)
	}
	if done := s.waitActionRun(hold.ID, time.Minute); done.Status != "cancelled" {
		t.Fatalf("holder %+v", done)
	}
	s.startOp(inst, "/deprovision", nil) // the cancelled run released the install
}
