package terraform_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

// app is a module of terraform's built-in terraform_data with variables, a
// sensitive one among them, and the manifest's env seen by a provisioner.
var app = map[string]string{
	"main.tf": `
variable "name" {
  type = string
}
variable "password" {
  type      = string
  sensitive = true
}
variable "replicas" {
  type    = number
  default = 1
}
resource "terraform_data" "app" {
  input = "hello ${var.name}"
}
resource "terraform_data" "secret" {
  input = var.password
}
resource "terraform_data" "env" {
  triggers_replace = [var.name]
  provisioner "local-exec" {
    command = "echo \"region from env: $APP_TEST_REGION\""
  }
}
`,
	"outputs.tf": `
output "greeting" {
  value = terraform_data.app.output
}
output "password" {
  value     = terraform_data.secret.output
  sensitive = true
}
output "replicas" {
  value = var.replicas
}
`,
}

const password = "hunter2-not-for-logs"

func TestPlanApplyOutputsAndDestroy(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	ws := h.inst.ID + ".sandbox"
	mod := testutil.TarGz(t, app)
	vars := map[string]any{"name": "world", "password": password, "replicas": 2}

	// Plan.
	planJob, plan := h.plan("plan-1", ws, mod, vars, false)
	if !plan.HasChanges || plan.Add != 3 || plan.Change != 0 || plan.Destroy != 0 || plan.Truncated {
		t.Errorf("plan: changes %v, %d to add, %d to change, %d to destroy (truncated %v); want changes, 3 to add",
			plan.HasChanges, plan.Add, plan.Change, plan.Destroy, plan.Truncated)
	}
	if !strings.Contains(plan.PlanText, "# terraform_data.app will be created") || !strings.Contains(plan.PlanText, "Plan: 3 to add, 0 to change, 0 to destroy.") {
		t.Errorf("plan text:\n%s", plan.PlanText)
	}
	var planJSON struct {
		FormatVersion   string `json:"format_version"`
		ResourceChanges []struct {
			Address string `json:"address"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal(plan.PlanJSON, &planJSON); err != nil || planJSON.FormatVersion == "" || len(planJSON.ResourceChanges) != 3 {
		t.Errorf("plan JSON %s: %v", plan.PlanJSON, err)
	}
	if !strings.Contains(string(plan.PlanJSON), "hello world") {
		t.Errorf("plan JSON lacks the non-sensitive value: %s", plan.PlanJSON)
	}
	if strings.Contains(string(plan.PlanJSON), password) || strings.Contains(plan.PlanText, password) {
		t.Errorf("the plan shows the sensitive variable's value")
	}
	if len(plan.PlanFile) == 0 {
		t.Fatal("no plan file")
	}
	logs := h.logs(planJob.ID)
	if !strings.Contains(logs, "Plan: 3 to add, 0 to change, 0 to destroy.") {
		t.Errorf("plan logs lack terraform's output:\n%s", logs)
	}
	h.lockFree(ws)

	// Apply exactly that plan.
	applyJob := h.apply("apply-1", ws, mod, plan.PlanFile)
	h.succeeded(applyJob, nil)
	want := map[string]protocol.TerraformOutput{
		"greeting": {Value: json.RawMessage(`"hello world"`)},
		"password": {Value: json.RawMessage(`"` + password + `"`), Sensitive: true},
		"replicas": {Value: json.RawMessage(`2`)},
	}
	logs = h.logs(applyJob.ID)
	for _, s := range []string{"region from env: eu-west", "Apply complete! Resources: 3 added, 0 changed, 0 destroyed."} {
		if !strings.Contains(logs, s) {
			t.Errorf("apply logs lack %q:\n%s", s, logs)
		}
	}
	for _, j := range []store.Job{planJob, applyJob} {
		all := h.logs(j.ID)
		var m protocol.TerraformManifest
		if err := json.Unmarshal([]byte(j.Manifest), &m); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(all, password) || strings.Contains(all, m.Backend.Password) {
			t.Errorf("the logs of %s show a secret:\n%s", j.Key, all)
		}
	}
	h.lockFree(ws)

	// Every state version is kept; the latest is the apply's.
	versions, err := h.s.ListTerraformStateVersions(ctx, h.org.ID, ws)
	if err != nil || len(versions) == 0 || versions[0].JobID != applyJob.ID || versions[0].Serial == 0 {
		t.Fatalf("state versions %+v %v; want the apply's on top", versions, err)
	}
	checkOutputs(t, "state", h.stateOutputs(ws), want)

	// Outputs only.
	var read protocol.TerraformApplyOutputs
	h.succeeded(h.run("outputs-1", h.manifest(protocol.TerraformOutputs, ws, mod)), &read)
	checkOutputs(t, "outputs", read.Outputs, want)

	// Nothing changed: a new plan says so.
	_, again := h.plan("plan-2", ws, mod, vars, false)
	if again.HasChanges || again.Add+again.Change+again.Destroy != 0 {
		t.Errorf("re-plan: changes %v, %d/%d/%d; want none", again.HasChanges, again.Add, again.Change, again.Destroy)
	}
	if !strings.Contains(again.PlanText, "No changes.") {
		t.Errorf("re-plan text:\n%s", again.PlanText)
	}

	// A changed variable is an update in place and a replacement.
	vars["name"] = "moon"
	_, change := h.plan("plan-3", ws, mod, vars, false)
	if !change.HasChanges || change.Add != 1 || change.Change != 1 || change.Destroy != 1 {
		t.Errorf("plan after a change: %v, %d/%d/%d; want 1 to add (the replacement), 1 to change, 1 to destroy",
			change.HasChanges, change.Add, change.Change, change.Destroy)
	}

	// Destroy: plan, then apply that plan.
	_, destroy := h.plan("destroy-plan", ws, mod, vars, true)
	if !destroy.HasChanges || destroy.Destroy != 3 || destroy.Add != 0 {
		t.Errorf("destroy plan: %v, %d/%d/%d; want 3 to destroy", destroy.HasChanges, destroy.Add, destroy.Change, destroy.Destroy)
	}
	destroyJob := h.apply("destroy-apply", ws, mod, destroy.PlanFile)
	h.succeeded(destroyJob, nil)
	if gone := h.stateOutputs(ws); len(gone) != 0 {
		t.Errorf("outputs after destroy: %+v", gone)
	}
	latest, err := h.s.GetTerraformState(ctx, h.org.ID, ws)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Resources []any `json:"resources"`
	}
	if err := json.Unmarshal([]byte(latest.State), &st); err != nil || len(st.Resources) != 0 || latest.JobID != destroyJob.ID {
		t.Errorf("state after destroy (version %d by %s): %d resources, %v", latest.Version, latest.JobID, len(st.Resources), err)
	}
	if after, _ := h.s.ListTerraformStateVersions(ctx, h.org.ID, ws); len(after) <= len(versions) {
		t.Errorf("%d state versions after the destroy, %d before: the old ones must be kept", len(after), len(versions))
	}
	h.lockFree(ws)
}

// plan_apply plans and applies in one job ("apply -auto-approve") and keeps
// the plan it printed; a plan without changes (and no drift) writes no new
// state; a destroy plan_apply empties the state.
func TestPlanApplyInOneJob(t *testing.T) {
	h := newHarness(t)
	ws := h.inst.ID + ".sandbox"
	mod := testutil.TarGz(t, app)
	run := func(key string, destroy bool) (store.Job, protocol.TerraformPlanApplyOutputs) {
		t.Helper()
		m := h.manifest(protocol.TerraformPlanApply, ws, mod)
		m.Destroy = destroy
		m.Variables = map[string]json.RawMessage{"name": []byte(`"one"`), "password": []byte(`"` + password + `"`)}
		m.Env = map[string]string{"APP_TEST_REGION": "eu-west"}
		j := h.run(key, m)
		var out protocol.TerraformPlanApplyOutputs
		h.succeeded(j, &out)
		return j, out
	}

	j, out := run("deploy-1", false)
	if !out.Applied || !out.Plan.HasChanges || out.Plan.Add != 3 || len(out.Plan.PlanFile) != 0 {
		t.Errorf("first plan_apply: applied %v, changes %v, %d to add, plan file %d bytes; want applied, 3 to add, no plan file kept",
			out.Applied, out.Plan.HasChanges, out.Plan.Add, len(out.Plan.PlanFile))
	}
	text := out.Plan.PlanText
	if !strings.Contains(text, "# terraform_data.app will be created") || !strings.Contains(text, "Plan: 3 to add, 0 to change, 0 to destroy.") ||
		!strings.Contains(text, "Changes to Outputs:") || strings.Contains(text, "Creating...") || strings.Contains(text, "Apply complete!") ||
		strings.Contains(text, "Refreshing state") {
		t.Errorf("plan text is not the plan alone:\n%s", text)
	}
	if strings.Contains(out.Plan.PlanText, password) {
		t.Errorf("the plan text shows the sensitive variable's value")
	}
	logs := h.logs(j.ID)
	if !strings.Contains(logs, "Apply complete! Resources: 3 added") || strings.Contains(logs, password) {
		t.Errorf("plan_apply logs:\n%s", logs)
	}
	if got := string(h.stateOutputs(ws)["greeting"].Value); got != `"hello one"` {
		t.Errorf("greeting in state %s, want \"hello one\"", got)
	}
	h.lockFree(ws)

	versions := func() int {
		t.Helper()
		vs, err := h.s.ListTerraformStateVersions(context.Background(), h.org.ID, ws)
		if err != nil {
			t.Fatal(err)
		}
		return len(vs)
	}
	before := versions()
	if _, again := run("deploy-2", false); again.Applied || again.Plan.HasChanges || !strings.HasPrefix(again.Plan.PlanText, "No changes.") ||
		strings.Contains(again.Plan.PlanText, "Apply complete!") {
		t.Errorf("unchanged plan_apply: applied %v, changes %v, text:\n%s", again.Applied, again.Plan.HasChanges, again.Plan.PlanText)
	}
	if after := versions(); after != before {
		t.Errorf("an unchanged plan_apply stored a state version: %d versions, %d before", after, before)
	}
	if _, gone := run("destroy", true); !gone.Applied || gone.Plan.Destroy != 3 {
		t.Errorf("destroy plan_apply: applied %v, %d to destroy; want applied, 3", gone.Applied, gone.Plan.Destroy)
	}
	if left := h.stateOutputs(ws); len(left) != 0 {
		t.Errorf("outputs left after the destroy: %v", left)
	}
	h.lockFree(ws)
}

// terraformWaits is the line a plan_apply job with deferred variables logs
// once terraform apply is started and reads the variables' pipe.
const terraformWaits = "outpost: started terraform apply: it plans once it reads the variables"

// awaitLog waits until the job's logs hold line.
func (h *harness) awaitLog(jobID, line string) {
	h.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(h.logs(jobID), line) {
		if time.Now().After(deadline) {
			h.t.Fatalf("the job's logs never said %q:\n%s", line, h.logs(jobID))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A plan_apply job queued before its variables are known fetches its
// module, runs init and starts terraform apply, which waits for them
// holding no lock; it plans and applies once they are given. Bad variable
// names in them fail the job with the name.
func TestPlanApplyWithDeferredVariables(t *testing.T) {
	h := newHarness(t)
	ws := h.inst.ID + ".sandbox"
	m := h.manifest(protocol.TerraformPlanApply, ws, testutil.TarGz(t, app))
	m.Env = map[string]string{"APP_TEST_REGION": "eu-west"}
	j, _ := h.enqueueSpec("deferred", m, true)
	h.awaitLog(j.ID, "outpost: waiting for the variables")
	h.awaitLog(j.ID, terraformWaits)
	if logs := h.logs(j.ID); !strings.Contains(logs, "outpost: terraform initialised") || strings.Contains(logs, "Plan:") {
		t.Fatalf("before its variables, the job should have run init and nothing more:\n%s", logs)
	}
	// terraform is started, and holds no lock while it waits.
	h.lockFree(ws)
	if _, err := h.s.GetTerraformState(context.Background(), h.org.ID, ws); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a state before the variables were given: %v", err)
	}
	inputs, _ := json.Marshal(protocol.TerraformInputs{Variables: map[string]json.RawMessage{
		"name": []byte(`"two"`), "password": []byte(`"` + password + `"`)}})
	if err := h.s.ProvideJobInputs(context.Background(), j.ID, inputs); err != nil {
		t.Fatal(err)
	}
	var out protocol.TerraformPlanApplyOutputs
	h.succeeded(h.wait(j.ID), &out)
	if !out.Applied || out.Plan.Add != 3 {
		t.Errorf("plan_apply with deferred variables: applied %v, %d to add", out.Applied, out.Plan.Add)
	}
	if got := string(h.stateOutputs(ws)["greeting"].Value); got != `"hello two"` {
		t.Errorf("greeting in state %s, want \"hello two\" (from the deferred variables)", got)
	}
	if strings.Contains(h.logs(j.ID), password) {
		t.Error("the logs show the sensitive variable")
	}
	h.lockFree(ws)

	bad, _ := h.enqueueSpec("deferred-bad", m, true)
	if err := h.s.ProvideJobInputs(context.Background(), bad.ID, []byte(`{"variables":{"no spaces":"x"}}`)); err != nil {
		t.Fatal(err)
	}
	if j := h.wait(bad.ID); j.Status != status.JobFailed || !strings.Contains(j.Error, "variables.no spaces: not a valid terraform variable name") {
		t.Errorf("deferred variables with a bad name: %s %q", j.Status, j.Error)
	}
	h.lockFree(ws)
}

func checkOutputs(t *testing.T, what string, got, want map[string]protocol.TerraformOutput) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s outputs %v, want %v", what, got, want)
	}
	for name, w := range want {
		g, ok := got[name]
		if !ok || string(g.Value) != string(w.Value) || g.Sensitive != w.Sensitive {
			t.Errorf("%s output %s = %s (sensitive %v), want %s (sensitive %v)", what, name, g.Value, g.Sensitive, w.Value, w.Sensitive)
		}
	}
}

func TestTerraformFailuresCarryItsDiagnostic(t *testing.T) {
	h := newHarness(t)

	// A configuration error fails the plan.
	bad := testutil.TarGz(t, map[string]string{"main.tf": `
resource "terraform_data" "a" {
  input = terraform_data.missing.output
}
`})
	j := h.run("plan-bad", h.manifest(protocol.TerraformPlan, h.inst.ID+".bad", bad))
	if j.Status != status.JobFailed || !strings.Contains(j.Error, "Error: Reference to undeclared resource") ||
		!strings.Contains(j.Error, "main.tf line 3") || !strings.Contains(j.Error, `"terraform_data" "missing"`) || len(j.Error) > 1000 {
		t.Errorf("plan of a bad reference: %s: %q", j.Status, j.Error)
	}

	// A provisioner that fails fails the apply, naming the resource.
	ws := h.inst.ID + ".failing"
	failing := testutil.TarGz(t, map[string]string{"main.tf": `
resource "terraform_data" "ok" {
  input = "fine"
}
resource "terraform_data" "fail" {
  provisioner "local-exec" {
    command = "echo boom >&2; exit 1"
  }
}
`})
	_, plan := h.plan("plan-failing", ws, failing, nil, false)
	j = h.apply("apply-failing", ws, failing, plan.PlanFile)
	if j.Status != status.JobFailed || !strings.Contains(j.Error, "Error: local-exec provisioner error, with terraform_data.fail") ||
		!strings.Contains(j.Error, "boom") || len(j.Error) > 1000 {
		t.Errorf("apply of a failing provisioner: %s: %q", j.Status, j.Error)
	}
	if !strings.Contains(h.logs(j.ID), "Error: local-exec provisioner error") {
		t.Errorf("the logs lack terraform's diagnostic:\n%s", h.logs(j.ID))
	}
	// Terraform kept what it did, and let go of the lock.
	h.lockFree(ws)
	if v, err := h.s.GetTerraformState(context.Background(), h.org.ID, ws); err != nil || !strings.Contains(v.State, `"ok"`) {
		t.Errorf("state after the failed apply: %v", err)
	}

	// A bad manifest is refused before terraform runs, naming the field.
	m := h.manifest(protocol.TerraformApply, ws, failing)
	j = h.run("apply-without-plan", m)
	if j.Status != status.JobFailed || !strings.Contains(j.Error, "plan_file: required") {
		t.Errorf("apply without a plan: %s: %q", j.Status, j.Error)
	}
}

func TestStalePlanIsRefused(t *testing.T) {
	h := newHarness(t)
	ws := h.inst.ID + ".sandbox"
	mod := testutil.TarGz(t, app)
	_, first := h.plan("plan-a", ws, mod, map[string]any{"name": "a", "password": "p"}, false)
	_, second := h.plan("plan-b", ws, mod, map[string]any{"name": "b", "password": "p"}, false)
	h.succeeded(h.apply("apply-b", ws, mod, second.PlanFile), nil)

	j := h.apply("apply-a", ws, mod, first.PlanFile)
	if j.Status != status.JobFailed || !strings.Contains(j.Error, "Saved plan is stale") {
		t.Errorf("apply of a stale plan: %s: %q", j.Status, j.Error)
	}
	var read protocol.TerraformApplyOutputs
	h.succeeded(h.run("outputs", h.manifest(protocol.TerraformOutputs, ws, mod)), &read)
	if string(read.Outputs["greeting"].Value) != `"hello b"` {
		t.Errorf("greeting %s after the stale apply, want plan b's", read.Outputs["greeting"].Value)
	}
}

// An attempt that dies holding the lock (its runner gone) is marked lost when
// its lease passes, which releases the lock; the retry applies the same plan.
func TestLostAttemptsLockIsReleasedForTheRetry(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	ws := h.inst.ID + ".sandbox"
	mod := testutil.TarGz(t, app)
	_, plan := h.plan("plan", ws, mod, map[string]any{"name": "retry", "password": "p"}, false)

	// The runner goes away; a stand-in claims the apply and takes the lock,
	// as terraform does first, then dies.
	h.stop()
	m := h.manifest(protocol.TerraformApply, ws, mod)
	m.PlanFile = plan.PlanFile
	queued, tok := h.enqueue("apply", m)
	claimed, err := h.s.ClaimJob(ctx, h.runnerID, time.Second, store.Claimant{DeferredInputs: true})
	if err != nil || claimed == nil || claimed.ID != queued.ID {
		t.Fatalf("claim: %+v %v", claimed, err)
	}
	h.lock(ws, queued.ID, tok, "dead-1", "gone@nowhere")

	// The gateway's reaper marks it lost, releasing the lock.
	if j := h.wait(queued.ID); j.Status != status.JobLost {
		t.Fatalf("attempt 1 ended %s, want lost", j.Status)
	}
	h.lockFree(ws)

	// The workflow retries; a runner runs attempt 2 for real.
	if _, err := h.s.RetryJob(ctx, queued.ID, 1); err != nil {
		t.Fatal(err)
	}
	h.startRunner()
	j := h.wait(queued.ID)
	h.succeeded(j, nil)
	if greeting := h.stateOutputs(ws)["greeting"].Value; j.Attempt != 2 || string(greeting) != `"hello retry"` {
		t.Errorf("attempt %d, greeting %s", j.Attempt, greeting)
	}
	if events, ok := storetest.StateUnlocked(t, h.s, queued.ID, 1, "dead-1"); !ok {
		t.Errorf("the job's history does not say the lost attempt's lock was released: %+v", events)
	}
	h.lockFree(ws)
}

func app1() map[string]string {
	return map[string]string{"main.tf": `resource "terraform_data" "a" {
  input = 1
}
`}
}
