package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/contract"
)

// runAction starts a manual run of an install's action with inputs.
func (s *stack) runAction(name string, inputs map[string]string) wire.ActionRun {
	s.t.Helper()
	var run wire.ActionRun
	if code := s.do("POST", "/v1/installs/"+s.install.ID+"/actions/"+name+"/runs", map[string]any{"inputs": inputs}, &run); code != http.StatusCreated {
		s.t.Fatalf("run action %s: %d %+v", name, code, run)
	}
	return run
}

// waitActionRun polls a run until it finishes.
func (s *stack) waitActionRun(id string, within time.Duration) wire.ActionRun {
	s.t.Helper()
	deadline := time.Now().Add(within)
	for {
		var run wire.ActionRun
		s.get("/v1/installs/"+s.install.ID+"/action-runs/"+id, &run)
		if run.FinishedAt != nil {
			return run
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("action run %s did not finish in %s: %+v", id, within, run)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// API call → ActionRun workflow → one action job per step on a real runner:
// the second step reads the first's outputs, outputs are recorded (the
// sensitive one masked in the API and the log), and a failing step fails
// the run with its exit code and skips the rest.
func TestActionRunsOnTheRunner(t *testing.T) {
	s := newStack(t, stackOptions{})
	s.startRunner()
	s.syncConfig("testdata/action-app")
	const key = "key-8c1d0e"
	run := s.runAction("check", map[string]string{"target": "blue", "api_key": key})
	if want := contract.ActionRunWorkflowID(s.install.ID, "check", run.ID); run.WorkflowID != want || run.Inputs["api_key"] != "(sensitive)" {
		t.Fatalf("run %+v, want workflow %s and the key masked", run, want)
	}
	done := s.waitActionRun(run.ID, 2*time.Minute)
	if done.Status != "succeeded" || len(done.Steps) != 2 {
		t.Fatalf("run %+v, want succeeded with 2 steps", done)
	}
	prep, use := done.Steps[0], done.Steps[1]
	if prep.Outputs["version"] != "blue-1" || prep.Outputs["token"] != "(sensitive)" || *prep.ExitCode != 0 || prep.JobID == nil {
		t.Fatalf("step prepare %+v", prep)
	}
	if use.Status != "succeeded" || use.Outputs["seen"] != "blue-1" {
		t.Fatalf("step use %+v: it did not see the first step's outputs", use)
	}
	if !s.logsContain(*prep.JobID, "preparing blue") || s.logsContain(*prep.JobID, key) {
		t.Errorf("prepare's log lacks its output, or shows the sensitive key")
	}
	var list wire.ActionRunList
	s.do("GET", "/v1/installs/"+s.install.ID+"/actions/check/runs", nil, &list)
	if len(list.Runs) != 1 || list.Runs[0].ID != run.ID {
		t.Errorf("runs %+v", list.Runs)
	}

	failed := s.waitActionRun(s.runAction("breaks", nil).ID, 2*time.Minute)
	st := failed.Steps
	if failed.Status != "failed" || len(st) != 3 || st[0].Status != "succeeded" || st[1].Status != "failed" ||
		st[1].ExitCode == nil || *st[1].ExitCode != 7 || st[2].Status != "skipped" || st[2].JobID != nil {
		t.Fatalf("run %+v, want step boom failed with exit code 7 and never skipped", failed)
	}
	if !strings.Contains(failed.Error, "boom") {
		t.Errorf("run error %q does not name the step", failed.Error)
	}
	var res contract.ActionRunResult
	if err := s.client.GetWorkflow(context.Background(), failed.WorkflowID, "").Get(context.Background(), &res); err != nil {
		t.Fatal(err)
	}
	if res.Steps["boom"] != "failed" || res.Status != "failed" {
		t.Errorf("workflow result %+v", res)
	}
}

// The same with outpostctl: list the actions, run one with --input and
// --wait, list its runs, show it; a bad input and a failed run exit non-zero;
// cancel a run (--wait: exit 6, cancelled), then again (exit 5).
func TestCLIActions(t *testing.T) {
	s, c := newCLIStack(t)
	s.startRunner()
	s.syncConfig("testdata/action-app")
	inst := s.install.ID
	if out := c.ok("", "actions", "list", inst); !strings.Contains(out, "check") || !strings.Contains(out, "target,api_key") {
		t.Fatalf("actions list:\n%s", out)
	}
	var run wire.ActionRun
	c.json("", &run, "actions", "run", inst, "check", "--input", "target=green", "--input", "api_key=k-31f0", "--wait")
	if run.Status != "succeeded" || len(run.Steps) != 2 || run.Steps[1].Outputs["seen"] != "green-1" {
		t.Fatalf("run %+v", run)
	}
	if out := c.ok("", "actions", "show", inst, run.ID); !strings.Contains(out, "version=green-1") || strings.Contains(out, "k-31f0") ||
		!strings.Contains(out, "token=(sensitive)") {
		t.Errorf("actions show:\n%s", out)
	}
	if out := c.ok("", "actions", "runs", inst, "check"); !strings.Contains(out, run.ID) {
		t.Errorf("actions runs:\n%s", out)
	}
	c.fails(1, "inputs.color", "actions", "run", inst, "check", "--input", "target=x", "--input", "color=red")
	c.fails(6, "failed", "actions", "run", inst, "breaks", "--wait")

	var slow wire.ActionRun
	c.json("", &slow, "actions", "run", inst, "slow")
	c.fails(6, "cancelled", "actions", "cancel", inst, slow.ID, "--wait")
	c.fails(5, "already finished (cancelled)", "actions", "cancel", inst, slow.ID)
}
