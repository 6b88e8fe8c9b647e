package terraform_test

// Cancelling terraform, and the state lock it holds, across attempts.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/internal/testutil/terraformtest"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/plugins/terraform"
	"github.com/outpost-dev/outpost/store"
)

// Cancelling an apply interrupts terraform (which runs in a process group of
// its own, so the runner's SIGTERM reaches it through the job process), which
// stops, keeps what it did and lets go of the lock.
func TestCancelInterruptsTerraform(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	ws := h.inst.ID + ".slow"
	mod := testutil.TarGz(t, map[string]string{"main.tf": `
resource "terraform_data" "fast" {
  input = "done"
}
resource "terraform_data" "slow" {
  depends_on = [terraform_data.fast]
  provisioner "local-exec" {
    command = "echo started; sleep 61"
  }
}
`})
	_, plan := h.plan("plan", ws, mod, nil, false)
	m := h.manifest(protocol.TerraformApply, ws, mod)
	m.PlanFile = plan.PlanFile
	j, _ := h.enqueue("apply", m)
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(h.logs(j.ID), "(local-exec): started") {
		if time.Now().After(deadline) {
			t.Fatalf("the provisioner never started:\n%s", h.logs(j.ID))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := h.s.RequestCancel(ctx, j.ID, "test"); err != nil {
		t.Fatal(err)
	}
	done := h.wait(j.ID)
	logs := h.logs(j.ID)
	if done.Status != status.JobCancelled || !strings.Contains(logs, "Interrupt received") || strings.Contains(done.Error, "SIGKILL") {
		t.Errorf("cancelled apply: %s %q; logs:\n%s", done.Status, done.Error, logs)
	}
	h.lockFree(ws)
	if v, err := h.s.GetTerraformState(ctx, h.org.ID, ws); err != nil || !strings.Contains(v.State, `"fast"`) {
		t.Errorf("the state lost what was done before the cancel: %v", err)
	}
	// Terraform killed the provisioner's shell; the job killed what the
	// shell had started.
	if !strings.Contains(logs, "outpost: killed 1 process(es) terraform left running") {
		t.Errorf("the provisioner's sleep was left running; logs:\n%s", logs)
	}
}

// Cancelling a plan_apply job whose terraform waits for its variables ends
// it at once: terraform, which has taken no lock, is killed, and nothing of
// it is left running.
func TestCancelWhileTerraformWaitsForItsVariables(t *testing.T) {
	h := newHarness(t)
	ws := h.inst.ID + ".sandbox"
	// Every variable has a default: given none, terraform would go on.
	mod := testutil.TarGz(t, map[string]string{"main.tf": `
variable "name" {
  type    = string
  default = "default"
}
resource "terraform_data" "app" {
  input = var.name
}
`})
	j, _ := h.enqueueSpec("deferred-cancelled", h.manifest(protocol.TerraformPlanApply, ws, mod), true)
	h.awaitLog(j.ID, terraformWaits)
	if n := terraformProcesses(t, j.ID); n != 1 {
		t.Fatalf("%d terraform processes of the job while it waits for its variables, want 1", n)
	}
	start := time.Now()
	if _, err := h.s.RequestCancel(context.Background(), j.ID, "test"); err != nil {
		t.Fatal(err)
	}
	if done := h.wait(j.ID); done.Status != status.JobCancelled {
		t.Errorf("cancelled while waiting for its variables: %s %q; logs:\n%s", done.Status, done.Error, h.logs(j.ID))
	}
	if waited := time.Since(start); waited > 20*time.Second {
		t.Errorf("the cancel took %v: terraform was not killed but waited out", waited)
	}
	if n := terraformProcesses(t, j.ID); n != 0 {
		t.Errorf("%d terraform processes of the cancelled job left running", n)
	}
	h.lockFree(ws)
	time.Sleep(time.Second) // what terraform would do if it went on
	if _, err := h.s.GetTerraformState(context.Background(), h.org.ID, ws); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a state after the job was cancelled before its variables came: %v", err)
	}
	if logs := h.logs(j.ID); strings.Contains(logs, "Plan:") || strings.Contains(logs, "Error") {
		t.Errorf("terraform went on after the cancel:\n%s", logs)
	}
}

// When terraform, started before the job's variables, fails before it reads
// them, the job fails at once with terraform's error, without waiting for
// inputs that may be long to come.
func TestTerraformFailingBeforeItsVariablesFailsTheJob(t *testing.T) {
	// A terraform that runs init but refuses to apply.
	real := terraformtest.Find(t)
	wrapper := filepath.Join(t.TempDir(), "terraform")
	script := "#!/bin/sh\nif [ \"$1\" = apply ]; then echo 'Error: this terraform refuses to apply' >&2; exit 1; fi\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(terraform.EnvTerraform, wrapper)
	h := newHarness(t)
	ws := h.inst.ID + ".sandbox"
	j, _ := h.enqueueSpec("refused", h.manifest(protocol.TerraformPlanApply, ws, testutil.TarGz(t, app)), true)
	done := h.wait(j.ID) // its inputs are never given
	if done.Status != status.JobFailed || !strings.Contains(done.Error, "this terraform refuses to apply") {
		t.Errorf("job %s %q; want failed with terraform's error; logs:\n%s", done.Status, done.Error, h.logs(j.ID))
	}
	h.lockFree(ws)
}

// terraformProcesses counts the running terraform processes whose command
// line names the job's variables' pipe.
func terraformProcesses(t *testing.T, jobID string) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc:", err)
	}
	n := 0
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), "-var-file=") && strings.Contains(string(cmdline), jobID) {
			n++
		}
	}
	return n
}

// A workspace locked by another running job stops terraform with its own
// "Error acquiring the state lock", naming the holder: the 423 answer carries
// the holder's lock info as terraform expects.
func TestHeldLockStopsTerraform(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	ws := h.inst.ID + ".sandbox"
	// The holder: a job of another runner (that never runs it), claimed.
	app, err := h.s.CreateApp(ctx, h.org.ID, "other", "")
	if err != nil {
		t.Fatal(err)
	}
	_, other, _, err := h.s.CreateInstall(ctx, h.org.ID, app.ID, "customer-2", nil)
	if err != nil {
		t.Fatal(err)
	}
	tok := store.NewStateToken()
	holder, _, err := h.s.EnqueueJob(ctx, store.JobSpec{Key: "holder", OrgID: h.org.ID, RunnerID: other.ID,
		Type: protocol.JobTypeTerraform, Workspace: ws, StateToken: tok})
	if err != nil {
		t.Fatal(err)
	}
	if j, err := h.s.ClaimJob(ctx, other.ID, time.Hour, store.Claimant{DeferredInputs: true}); err != nil || j == nil || j.ID != holder.ID {
		t.Fatalf("claim: %+v %v", j, err)
	}
	h.lock(ws, holder.ID, tok, "held-by-2", "someone@elsewhere")

	m := h.manifest(protocol.TerraformPlan, ws, testutil.TarGz(t, app1()))
	j := h.run("plan", m)
	t.Logf("the job's error: %s", j.Error)
	if j.Status != status.JobFailed || !strings.Contains(j.Error, "Error acquiring the state lock") || !strings.Contains(j.Error, "held-by-2") {
		t.Errorf("plan of a locked workspace: %s %q\nlogs:\n%s", j.Status, j.Error, h.logs(j.ID))
	}
	if l, _ := h.s.GetTerraformStateLock(ctx, h.org.ID, ws); l == nil || l.LockID != "held-by-2" {
		t.Errorf("the holder lost its lock: %+v", l)
	}
}
