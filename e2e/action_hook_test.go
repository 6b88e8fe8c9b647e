package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
)

// hookRun is the run of action an operation's hook step ran.
func (s *stack) hookRun(inst, action, opID string) wire.ActionRun {
	s.t.Helper()
	for _, r := range s.actionRuns(inst, action) {
		if r.OperationID == opID {
			var full wire.ActionRun
			s.do("GET", "/v1/installs/"+inst+"/action-runs/"+r.ID, nil, &full)
			return full
		}
	}
	s.t.Fatalf("no run of %s by operation %s: %+v", action, opID, s.actionRuns(inst, action))
	return wire.ActionRun{}
}

// Lifecycle hooks on a real runner: a before-provision hook that fails
// stops the provision (sandbox and api skipped naming it, the operation
// failed naming it); once it passes, api's after-deploy hook runs after
// api and reads api's output, in the provision and in a deploy of api. A
// runner whose customer allows only report refuses gate: that provision
// fails the same way, saying why, and no gate job is queued.
func TestLifecycleHooksRunInTheOperation(t *testing.T) {
	s := newStack(t, stackOptions{})
	s.syncConfig("testdata/hook-app")
	gate := filepath.Join(t.TempDir(), "open")
	inst, _ := s.newInstall("cust-hooks", map[string]any{"name": "gate_file", "value": gate})

	op := s.waitOp(inst, s.startOp(inst, "/provision", nil).ID, 5*time.Minute)
	if op.Status != status.OpFailed || !strings.Contains(op.Error, "before:gate") {
		t.Fatalf("provision with the gate closed: %s %q, want failed naming before:gate", op.Status, op.Error)
	}
	if st := op.step(t, "before:gate"); st.Status != status.StepFailed {
		t.Fatalf("before:gate %+v, want failed", st)
	}
	for _, name := range []string{"sandbox", "api"} {
		if st := op.step(t, name); st.Status != status.StepSkipped || !strings.Contains(st.Error, "before:gate") || st.ApplyJobID != "" {
			t.Fatalf("%s %+v, want skipped naming before:gate, no job", name, st)
		}
	}
	if st := op.step(t, "after:report:api"); st.Status != status.StepSkipped {
		t.Fatalf("after:report:api %+v, want skipped", st)
	}
	closed := s.hookRun(inst, "gate", op.ID)
	if closed.Trigger != "before" || closed.OperationStep != "before:gate" || closed.Status != "failed" ||
		closed.WorkflowID != contract.ActionRunWorkflowID(inst, "gate", closed.ID) || *closed.Steps[0].ExitCode != 3 {
		t.Fatalf("gate's run %+v, want failed with exit code 3", closed)
	}
	if !s.logsContain(*closed.Steps[0].JobID, "gate closed") {
		t.Errorf("the gate's log lacks its message")
	}

	s.replay(op.WorkflowID)

	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	op = s.provisioned(inst, 5*time.Minute)
	s.replay(op.WorkflowID)
	if st := op.step(t, "after:report:api"); st.Status != status.StepSucceeded || !slices.Contains(st.After, "api") {
		t.Fatalf("after:report:api %+v, want succeeded after api", st)
	}
	var url string
	if err := json.Unmarshal(s.stepOutputs(inst, "api").Outputs["url"].Value, &url); err != nil {
		t.Fatalf("api's url output: %v", err)
	}
	if report := s.hookRun(inst, "report", op.ID); report.Trigger != "after" || report.Steps[0].Outputs["url"] != url || url == "" {
		t.Fatalf("report's run %+v, want it to report api's url %v", report, url)
	}

	op = s.waitOp(inst, s.startOp(inst, "/components/api/deploy", nil).ID, 5*time.Minute)
	if op.Status != status.OpSucceeded || op.step(t, "after:report:api").Status != status.StepSucceeded {
		t.Fatalf("deploy of api: %s %q %+v", op.Status, op.Error, op.Steps)
	}
	if report := s.hookRun(inst, "report", op.ID); report.Steps[0].Outputs["url"] != url {
		t.Fatalf("report's run after the deploy %+v, want api's url %v", report, url)
	}
	s.replay(op.WorkflowID)

	refusing, _ := s.newInstallWithRunner("cust-refuses", []string{"OUTPOST_ACTIONS=report"}, map[string]any{"name": "gate_file", "value": gate})
	s.runnerOf(refusing, "the runner's policy", func(customerView) bool { return true })
	op = s.waitOp(refusing, s.startOp(refusing, "/provision", nil).ID, 5*time.Minute)
	const why = `the customer's runner does not allow action "gate" (allowed: report)`
	if op.Status != status.OpFailed || !strings.Contains(op.Error, "before:gate: action gate: "+why) ||
		op.step(t, "sandbox").Status != status.StepSkipped {
		t.Fatalf("provision on a runner refusing gate: %s %q %+v", op.Status, op.Error, op.Steps)
	}
	if run := s.hookRun(refusing, "gate", op.ID); run.Status != "failed" || run.Error != why || run.Steps[0].JobID != nil {
		t.Fatalf("refused gate's run %+v, want failed saying why, no job", run)
	}
}

// actionJobs are the jobs of the install's action runs: those the hooks of
// operation opID ran, and the others (cron, manual, runbook runs).
func (s *stack) actionJobs(inst, opID string) (ofOp, others map[string]bool) {
	s.t.Helper()
	ofOp, others = map[string]bool{}, map[string]bool{}
	var actions wire.ActionList
	s.do("GET", "/v1/installs/"+inst+"/actions", nil, &actions)
	for _, a := range actions.Actions {
		for _, r := range s.actionRuns(inst, a.Name) {
			var full wire.ActionRun
			s.do("GET", "/v1/installs/"+inst+"/action-runs/"+r.ID, nil, &full)
			for _, st := range full.Steps {
				if st.JobID != nil && r.OperationID == opID {
					ofOp[*st.JobID] = true
				} else if st.JobID != nil {
					others[*st.JobID] = true
				}
			}
		}
	}
	return ofOp, others
}
