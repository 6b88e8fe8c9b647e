package e2e

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
)

// The demo app's actions and runbook on a real runner, with outpostctl:
// the provision runs migrate before api and warm_cache after it (reading
// api's outputs); a manual migrate with an input feeds api's
// schema_version through its template; the upgrade runbook migrates,
// deploys api, waits at its gate, is approved and checks the API, whose
// health check result is api's health (with no replica, the check fails:
// TestDemoRunbookFailsIsFixedAndResumed).
func TestDemoActionsAndRunbook(t *testing.T) {
	s := newStack(t, stackOptions{})
	s.syncConfig(exampleDir)
	inst, _ := s.newInstall("cust-actions", map[string]any{"name": "db_password", "value": "demo-pa55", "sensitive": true})
	c := newCLI(t, s)
	prov := s.provisioned(inst, 5*time.Minute)
	if len(prov.Steps) != 9 {
		t.Fatalf("provision steps %+v, want the sandbox, six components and api's two hooks", prov.Steps)
	}
	s.checkDemoHooks(inst, prov, "2")
	s.replay(prov.WorkflowID)

	// By hand, with an input: api's next deploy renders migrate's output.
	var mig wire.ActionRun
	c.json("", &mig, "actions", "run", inst, "migrate", "--input", "version=3", "--wait")
	if mig.Status != "succeeded" || mig.Trigger != "manual" || mig.Steps[0].Outputs["schema_version"] != "3" ||
		!s.logsContain(*mig.Steps[0].JobID, "to schema version 3") {
		t.Fatalf("migrate --input version=3: %+v", mig)
	}
	deploy := s.waitOp(inst, s.startOp(inst, "/components/api/deploy", nil).ID, 5*time.Minute)
	if deploy.Status != status.OpSucceeded || !strings.Contains(deploy.step(t, "api").Plan, `"3"`) {
		t.Fatalf("deploy of api: %s %q, api's plan:\n%s", deploy.Status, deploy.Error, deploy.step(t, "api").Plan)
	}
	s.checkDemoHooks(inst, deploy, "3")

	s.checkDemoUpgrade(c, inst)
}

// checkDemoHooks: in op, migrate ran before api (its run's output the
// schema version api deployed with) and warm_cache after it, its log
// naming api's URL and schema version (outputs of the step it follows).
func (s *stack) checkDemoHooks(inst string, op operation, version string) {
	t := s.t
	t.Helper()
	before, api, after := op.step(t, "before:migrate:api"), op.step(t, "api"), op.step(t, "after:warm_cache:api")
	if before.Status != status.StepSucceeded || !slices.Contains(api.After, before.Name) ||
		after.Status != status.StepSucceeded || !slices.Equal(after.After, []string{"api"}) {
		t.Fatalf("%s's hooks: %+v, api %+v, %+v", op.Kind, before, api, after)
	}
	outs := s.stepOutputs(inst, "api").Outputs
	var url, schema string
	if json.Unmarshal(outs["url"].Value, &url) != nil || json.Unmarshal(outs["schema_version"].Value, &schema) != nil || schema != version {
		t.Fatalf("api's outputs after the %s: %+v, want schema_version %q", op.Kind, outs, version)
	}
	if m := s.hookRun(inst, "migrate", op.ID); m.Trigger != "before" || m.Steps[0].Outputs["schema_version"] != version {
		t.Fatalf("migrate's hook run %+v, want schema_version %s", m, version)
	}
	w := s.hookRun(inst, "warm_cache", op.ID)
	if w.Trigger != "after" || w.Steps[0].Outputs["warmed"] != url || !s.logsContain(*w.Steps[0].JobID, "warming the cache of "+url+" (schema version "+version+")") {
		t.Fatalf("warm_cache's hook run %+v, want it to warm %s at schema version %s", w, url, version)
	}
}

// checkDemoUpgrade runs the upgrade runbook to version 4: it migrates,
// deploys api (at schema version 4), waits at its gate; approved, its
// check (the health action) finds the API healthy, which is api's health.
func (s *stack) checkDemoUpgrade(c *cli, inst string) {
	t := s.t
	t.Helper()
	if out := c.ok("", "runbooks", "list", inst); !strings.Contains(out, "migrate(action) → deploy_api(deploy) → approve(approval) → check(action)") {
		t.Fatalf("runbooks list:\n%s", out)
	}
	var run wire.RunbookRun
	c.json("", &run, "runbooks", "run", inst, "upgrade", "--input", "version=4", "--wait")
	if run.Status != "waiting_approval" || run.Steps[0].Status != "succeeded" || run.Steps[1].Status != "succeeded" ||
		run.Steps[2].Status != "waiting_approval" || run.Steps[3].Status != "pending" {
		t.Fatalf("upgrade %+v, want it waiting at approve", run)
	}
	s.checkDemoHooks(inst, s.getOp(inst, run.Steps[1].OperationID, 0), "4")

	c.ok("", "runbooks", "approve", inst, run.ID, "--wait")
	c.json("", &run, "runbooks", "show", inst, run.ID)
	if run.Status != "succeeded" || run.Steps[2].ApprovedBy == "" || run.Steps[3].ActionRunID == "" {
		t.Fatalf("approved upgrade %+v, want it succeeded", run)
	}
	var check wire.ActionRun
	s.do("GET", "/v1/installs/"+inst+"/action-runs/"+run.Steps[3].ActionRunID, nil, &check)
	api := s.componentHealth(inst, "api")
	if check.Action != "health" || check.Trigger != "runbook" || api == nil || api.State != protocol.HealthHealthy || api.Source != "action:health" ||
		!strings.HasPrefix(api.Condition, "2 API replicas at https://cust-actions.") {
		t.Fatalf("the upgrade's check %+v; api's health %+v, want healthy from action:health", check, api)
	}
	s.replay(run.WorkflowID)
}
