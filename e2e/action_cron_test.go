package e2e

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"

	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
)

// tickAction runs every minute and writes one output.
const tickAction = `description = "Ticks every minute"

[[triggers]]
type = "cron"
schedule = "* * * * *"

[[steps]]
name = "tick"
command = ["/bin/sh", "-c", "echo ticking; echo \"beat=tock\" >> \"$OUTPOST_OUTPUTS\""]
`

// actionRuns lists an install's runs of an action, newest first.
func (s *stack) actionRuns(inst, action string) []wire.ActionRun {
	s.t.Helper()
	var list wire.ActionRunList
	s.get("/v1/installs/"+inst+"/actions/"+action+"/runs", &list)
	return list.Runs
}

// A cron action gets a Temporal schedule when its install is provisioned;
// the schedule runs it on the runner (trigger cron, its step's output
// recorded). Deploying a config version without the action deletes the
// schedule: no run starts after it.
func TestCronActionRunsAndStopsWhenRemoved(t *testing.T) {
	s := newStack(t, stackOptions{})
	dir := t.TempDir()
	copyDir(t, "testdata/action-app", dir)
	tick := filepath.Join(dir, "actions", "tick.toml")
	if err := os.WriteFile(tick, []byte(tickAction), 0o644); err != nil {
		t.Fatal(err)
	}
	s.syncConfig(dir)
	inst, _ := s.newInstall("cust-cron")
	s.provisioned(inst, 5*time.Minute)
	ctx := context.Background()
	sched := s.client.ScheduleClient().GetHandle(ctx, contract.ActionScheduleID(inst, "tick"))
	if _, err := sched.Describe(ctx); err != nil {
		t.Fatalf("the schedule of tick after the provision: %v", err)
	}

	var ran wire.ActionRun
	waitFor(t, 150*time.Second, "a cron run of tick to succeed", func() bool {
		for _, r := range s.actionRuns(inst, "tick") {
			if r.Trigger == "cron" && r.Status == "succeeded" {
				ran = r
				return true
			}
		}
		return false
	})
	var done wire.ActionRun
	if code := s.do("GET", "/v1/installs/"+inst+"/action-runs/"+ran.ID, nil, &done); code != http.StatusOK {
		t.Fatalf("get action run %s: %d", ran.ID, code)
	}
	if len(done.Steps) != 1 || done.Steps[0].Outputs["beat"] != "tock" || done.StartedBy != "" || done.ConfigVersion != 1 {
		t.Fatalf("cron run %+v, want one step with output beat=tock", done)
	}
	if !s.logsContain(*done.Steps[0].JobID, "ticking") {
		t.Errorf("the step's log lacks its echo")
	}

	if err := os.Remove(tick); err != nil {
		t.Fatal(err)
	}
	s.syncConfig(dir)
	if op := s.waitOp(inst, s.startOp(inst, "/deploy", nil).ID, 5*time.Minute); op.Status != status.OpSucceeded {
		t.Fatalf("deploy of version 2: %s %q %+v", op.Status, op.Error, op.Steps)
	}
	deployed := time.Now()
	_, err := sched.Describe(ctx)
	var nf *serviceerror.NotFound
	if !errors.As(err, &nf) {
		t.Fatalf("the schedule of tick after deploying a version without it: %v, want not found", err)
	}
	// A run the schedule started just before the deploy may still finish.
	waitFor(t, time.Minute, "tick's runs to finish", func() bool {
		for _, r := range s.actionRuns(inst, "tick") {
			if r.FinishedAt == nil {
				return false
			}
		}
		return true
	})
	before := len(s.actionRuns(inst, "tick"))
	for time.Since(deployed) < 75*time.Second {
		time.Sleep(5 * time.Second)
		for _, r := range s.actionRuns(inst, "tick") {
			if r.CreatedAt.After(deployed) {
				t.Fatalf("run %s of tick started %s after the deploy removed it", r.ID, r.CreatedAt.Sub(deployed))
			}
		}
	}
	if after := len(s.actionRuns(inst, "tick")); after != before {
		t.Fatalf("tick has %d runs, had %d when the deploy ended", after, before)
	}
}
