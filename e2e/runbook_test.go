package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
)

// A runbook on a real runner, with outpostctl: migrate (an action) → deploy
// api (an operation) → an approval gate → check (an action that fails until
// its marker file exists). The run waits at the gate, is approved, fails at
// check; the file is made and the run resumed: only check runs again, and
// the run succeeds.
func TestRunbookFailsIsFixedAndResumed(t *testing.T) {
	s, c := newCLIStack(t)
	inst := s.provisionedRunbookApp()
	if out := c.ok("", "runbooks", "list", inst); !strings.Contains(out, "migrate(action) → deploy_api(deploy) → gate(approval) → check(action)") {
		t.Fatalf("runbooks list:\n%s", out)
	}
	marker := filepath.Join(t.TempDir(), "ready")
	var run wire.RunbookRun
	c.json("", &run, "runbooks", "run", inst, "release", "--input", "version=v7", "--input", "marker="+marker, "--wait")
	if run.Status != "waiting_approval" || run.WorkflowID != contract.RunbookRunWorkflowID(inst, "release", run.ID) {
		t.Fatalf("run %+v, want it waiting at the gate", run)
	}
	migrate, deploy := run.Steps[0], run.Steps[1]
	if migrate.Status != "succeeded" || migrate.ActionRunID == "" || deploy.Status != "succeeded" || deploy.OperationID == "" ||
		run.Steps[2].Status != "waiting_approval" || run.Steps[3].Status != "pending" {
		t.Fatalf("steps %+v", run.Steps)
	}
	var mig wire.ActionRun
	s.do("GET", "/v1/installs/"+inst+"/action-runs/"+migrate.ActionRunID, nil, &mig)
	if mig.Trigger != "runbook" || mig.Inputs["version"] != "v7" || mig.Steps[0].Outputs["migrated"] != "v7" ||
		!s.logsContain(*mig.Steps[0].JobID, "migrating to v7") {
		t.Fatalf("migrate's action run %+v", mig)
	}
	// Provisioned already, api's plan has no changes: the deploy ran all the same (its plan job).
	if op := s.getOp(inst, deploy.OperationID, 0); op.Status != status.OpSucceeded || op.Kind != "deploy_component" ||
		op.step(t, "api").Status != status.StepNoChanges || op.step(t, "api").PlanJobID == "" {
		t.Fatalf("deploy operation %+v", op)
	}

	// Approved, it fails at check; approving again is refused.
	c.fails(6, "step check", "runbooks", "approve", inst, run.ID, "--wait")
	c.json("", &run, "runbooks", "show", inst, run.ID)
	check := run.Steps[3]
	if run.Status != "failed" || run.Steps[2].ApprovedBy == "" || check.Status != "failed" || check.ActionRunID == "" ||
		!strings.Contains(check.Error, "failed") {
		t.Fatalf("run %+v", run)
	}
	var failed wire.ActionRun
	s.do("GET", "/v1/installs/"+inst+"/action-runs/"+check.ActionRunID, nil, &failed)
	if failed.Steps[0].ExitCode == nil || *failed.Steps[0].ExitCode != 3 || !s.logsContain(*failed.Steps[0].JobID, "not ready") {
		t.Fatalf("check's action run %+v", failed)
	}
	if code := s.do("POST", "/v1/installs/"+inst+"/runbook-runs/"+run.ID+"/approve", nil, nil); code != http.StatusConflict {
		t.Errorf("approving a failed run: %d, want 409", code)
	}

	s.replay(run.WorkflowID) // the first execution: the gate and the failed check

	// Fixed and resumed: only check runs again.
	if err := os.WriteFile(marker, []byte("ok"), 0o644); err != nil {
		t.Fatal(err)
	}
	var done wire.RunbookRun
	c.json("", &done, "runbooks", "resume", inst, run.ID, "--wait")
	if done.Status != "succeeded" || done.Steps[0].ActionRunID != migrate.ActionRunID || done.Steps[1].OperationID != deploy.OperationID ||
		done.Steps[3].Status != "succeeded" || done.Steps[3].ActionRunID == check.ActionRunID {
		t.Fatalf("resumed run %+v; want migrate and deploy_api as they were, check run again", done)
	}
	var migrations wire.ActionRunList
	s.do("GET", "/v1/installs/"+inst+"/actions/migrate/runs", nil, &migrations)
	if len(migrations.Runs) != 1 {
		t.Errorf("migrate ran %d times, want once", len(migrations.Runs))
	}
	if out := c.ok("", "runbooks", "runs", inst, "release"); !strings.Contains(out, run.ID) || !strings.Contains(out, "succeeded") {
		t.Errorf("runbooks runs:\n%s", out)
	}
	s.replay(run.WorkflowID)
}

// provisionedRunbookApp starts the stack's runner, syncs
// testdata/runbook-app and provisions the stack's install of it.
func (s *stack) provisionedRunbookApp() string {
	s.t.Helper()
	s.startRunner()
	s.syncConfig("testdata/runbook-app")
	s.provisioned(s.install.ID, 5*time.Minute)
	return s.install.ID
}

// Cancelled with the CLI while it waits at its gate, a run ends cancelled:
// the gate cancelled, check skipped, approving and cancelling again
// refused. Resumed, it does not run migrate or deploy_api again and waits
// at the gate anew.
func TestRunbookCancelledAtItsGateAndResumed(t *testing.T) {
	s, c := newCLIStack(t)
	inst := s.provisionedRunbookApp()
	var run wire.RunbookRun
	c.json("", &run, "runbooks", "run", inst, "release", "--input", "version=v8", "--input", "marker="+filepath.Join(t.TempDir(), "ready"), "--wait")
	if run.Status != "waiting_approval" {
		t.Fatalf("run %+v, want it waiting at the gate", run)
	}
	migrate := run.Steps[0].ActionRunID
	c.fails(6, "runbook run "+run.ID+" cancelled", "runbooks", "cancel", inst, run.ID, "--wait")
	c.json("", &run, "runbooks", "show", inst, run.ID)
	if run.Status != "cancelled" || run.FinishedAt == nil || run.Steps[0].Status != "succeeded" || run.Steps[1].Status != "succeeded" ||
		run.Steps[2].Status != "cancelled" || run.Steps[3].Status != "skipped" {
		t.Fatalf("cancelled run %+v", run)
	}
	path := "/v1/installs/" + inst + "/runbook-runs/" + run.ID
	for _, verb := range []string{"approve", "cancel"} {
		if code := s.do("POST", path+"/"+verb, nil, nil); code != http.StatusConflict {
			t.Errorf("%s a cancelled run: %d, want 409", verb, code)
		}
	}
	s.replay(run.WorkflowID) // the cancelled execution

	c.json("", &run, "runbooks", "resume", inst, run.ID, "--wait")
	if run.Status != "waiting_approval" || run.Steps[0].ActionRunID != migrate || run.Steps[2].Status != "waiting_approval" {
		t.Fatalf("resumed run %+v, want it at the gate again, migrate as it was", run)
	}
}
