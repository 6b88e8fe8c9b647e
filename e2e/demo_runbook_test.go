package e2e

import (
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
)

// The demo app's upgrade runbook fails in the middle, is fixed and resumed,
// with outpostctl on a real runner: with no API replica (api_replicas 0),
// the run migrates, deploys api, is approved and fails at check (the health
// action: api unhealthy, deciding the install's). api_replicas set back to
// 2, the resumed run runs check alone again and succeeds, api healthy.
func TestDemoRunbookFailsIsFixedAndResumed(t *testing.T) {
	s, inst := provisionedDemo(t, exampleDir, "cust-resume")
	c := newCLI(t, s)
	s.setDemoInput(inst, "api_replicas", "0")

	var run wire.RunbookRun
	c.json("", &run, "runbooks", "run", inst, "upgrade", "--input", "version=3", "--wait")
	if run.Status != "waiting_approval" || run.Steps[2].Status != "waiting_approval" {
		t.Fatalf("upgrade %+v, want it waiting at approve", run)
	}
	c.fails(6, "step check", "runbooks", "approve", inst, run.ID, "--wait")
	c.json("", &run, "runbooks", "show", inst, run.ID)
	s.checkDemoCheckFailed(inst, run)
	s.replay(run.WorkflowID) // the first execution: the gate and the failed check

	s.setDemoInput(inst, "api_replicas", "2")
	var done wire.RunbookRun
	c.json("", &done, "runbooks", "resume", inst, run.ID, "--wait")
	s.checkDemoResumedAtCheck(inst, run, done)
	s.replay(done.WorkflowID)
}

// setDemoInput sets an install input and applies it: its update_inputs
// operation must succeed.
func (s *stack) setDemoInput(inst, name, value string) {
	t := s.t
	t.Helper()
	body := map[string]any{"set": []map[string]any{{"name": name, "value": value}}, "apply": true}
	code, raw, ans := s.patchInputs(inst, body)
	if code != http.StatusOK || ans.Operation == nil {
		t.Fatalf("PATCH %s=%s: %d %s", name, value, code, raw)
	}
	if op := s.waitOp(inst, ans.Operation.ID, 5*time.Minute); op.Status != status.OpSucceeded {
		t.Fatalf("update_inputs %s=%s: %s %q %+v", name, value, op.Status, op.Error, op.Steps)
	}
}

// checkDemoCheckFailed: run failed at check, after migrate, deploy_api and
// the approved gate; check's health run failed saying no API replica runs,
// which is api's health and decides the install's.
func (s *stack) checkDemoCheckFailed(inst string, run wire.RunbookRun) {
	t := s.t
	t.Helper()
	check := run.Steps[3]
	if run.Status != "failed" || run.Steps[0].Status != "succeeded" || run.Steps[1].Status != "succeeded" ||
		run.Steps[2].ApprovedBy == "" || check.Status != "failed" || check.ActionRunID == "" ||
		!strings.Contains(check.Error, "action run "+check.ActionRunID+" failed") || !strings.Contains(run.Error, "step check") {
		t.Fatalf("upgrade with no API replica %+v, want it failed at check", run)
	}
	var ar wire.ActionRun
	s.do("GET", "/v1/installs/"+inst+"/action-runs/"+check.ActionRunID, nil, &ar)
	why := "no API replicas run at https://cust-resume."
	if ar.Action != "health" || ar.Status != "failed" || ar.Steps[0].Outputs["health"] != "unhealthy" || !s.logsContain(*ar.Steps[0].JobID, why) {
		t.Fatalf("check's action run %+v, want health failed saying %q", ar, why)
	}
	h := s.healthOf(inst).Health
	// The health action's own schedule (every five minutes) may have recorded the same check since.
	if h.State != protocol.HealthUnhealthy || h.Component != "api" || !strings.Contains(h.Condition, why) ||
		!strings.HasPrefix(h.Object, "action health (run act_") {
		t.Fatalf("install's health after the failed check %+v, want api unhealthy from a health run", h)
	}
}

// checkDemoResumedAtCheck: the resumed run succeeded running check alone
// again: migrate, deploy_api and approve as they were in failed (no other
// runbook migration, no other deploy of api), its new check healthy, and
// api's health, which no longer decides the install's.
func (s *stack) checkDemoResumedAtCheck(inst string, failed, done wire.RunbookRun) {
	t := s.t
	t.Helper()
	if done.ID != failed.ID || done.Status != "succeeded" || !reflect.DeepEqual(done.Steps[:3], failed.Steps[:3]) ||
		done.Steps[3].Status != "succeeded" || done.Steps[3].ActionRunID == failed.Steps[3].ActionRunID {
		t.Fatalf("resumed run %+v\nfailed run %+v\nwant the first three steps as they were, check run again", done, failed)
	}
	if n := s.countRuns(inst, "migrate", "runbook"); n != 1 {
		t.Errorf("migrate ran %d times for a runbook, want once", n)
	}
	if n := s.countOps(inst, "deploy_component"); n != 1 {
		t.Errorf("%d deploys of api, want the runbook's one", n)
	}
	var check wire.ActionRun
	s.do("GET", "/v1/installs/"+inst+"/action-runs/"+done.Steps[3].ActionRunID, nil, &check)
	api := s.componentHealth(inst, "api")
	if check.Status != "succeeded" || check.Steps[0].Outputs["health"] != "healthy" || api == nil || api.State != protocol.HealthHealthy ||
		!strings.HasPrefix(api.Object, "action health (run act_") || !strings.HasPrefix(api.Condition, "2 API replicas at https://cust-resume.") {
		t.Fatalf("the resumed check %+v; api's health %+v, want healthy from it", check, api)
	}
	// The install's health is no longer api's (web's, read from a cluster with no nodes, is not healthy).
	h := s.healthOf(inst)
	i := slices.IndexFunc(h.Transitions, func(tr wire.HealthTransition) bool { return tr.Component == "api" }) // newest first
	if h.Health.Component == "api" || i < 0 || h.Transitions[i].From != protocol.HealthUnhealthy || h.Transitions[i].To != protocol.HealthHealthy {
		t.Errorf("the install's health after the resumed check %+v, want api's last transition unhealthy → healthy", h)
	}
}

// countRuns is how many runs of action trigger started.
func (s *stack) countRuns(inst, action, trigger string) int {
	n := 0
	for _, r := range s.actionRuns(inst, action) {
		if r.Trigger == trigger {
			n++
		}
	}
	return n
}

// countOps is how many of the install's operations are of kind.
func (s *stack) countOps(inst, kind string) int {
	var ops struct{ Operations []operation }
	s.do("GET", "/v1/installs/"+inst+"/operations", nil, &ops)
	n := 0
	for _, op := range ops.Operations {
		if op.Kind == kind {
			n++
		}
	}
	return n
}

// componentHealth is a component's health in the install's, nil if none.
func (s *stack) componentHealth(inst, component string) *wire.ComponentHealth {
	for _, ch := range s.healthOf(inst).Components {
		if ch.Component == component {
			return &ch
		}
	}
	return nil
}
