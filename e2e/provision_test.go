package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/outpost-dev/outpost/activities"
	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
	"github.com/outpost-dev/outpost/worker"
)

// step and operation are the API's views.
type step struct {
	Name       string      `json:"name"`
	Destroy    bool        `json:"destroy"`
	After      []string    `json:"after"`
	Status     status.Step `json:"status"`
	PlanJobID  string      `json:"plan_job_id"`
	ApplyJobID string      `json:"apply_job_id"`
	SyncJobID  string      `json:"sync_job_id"`
	HasChanges *bool       `json:"has_changes"`
	Remove     int         `json:"destroy_count"`
	Plan       string      `json:"plan"`
	Error      string      `json:"error"`
	StartedAt  *time.Time  `json:"started_at"`
	FinishedAt *time.Time  `json:"finished_at"`
}

type operation struct {
	ID         string     `json:"id"`
	Kind       string     `json:"kind"`
	WorkflowID string     `json:"workflow_id"`
	Status     status.Op  `json:"status"`
	Error      string     `json:"error"`
	Steps      []step     `json:"steps"`
	FinishedAt *time.Time `json:"finished_at"`
	// TriggeredBy: the operation that started this one (a reconcile's check).
	TriggeredBy string `json:"triggered_by"`
}

func (o operation) step(t testing.TB, name string) step {
	t.Helper()
	for _, s := range o.Steps {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("operation %s has no step %s: %+v", o.ID, name, o.Steps)
	return step{}
}

// syncConfig uploads an app config directory as the API's tarball.
func (s *stack) syncConfig(dir string) {
	s.t.Helper()
	if s.buildRunner == nil {
		s.buildRunner = s.startBuildRunner()
	}
	syncConfig(s.t, s.apiURL, s.token, s.install.AppID, dir)
}

// syncConfig uploads dir as app appID's config through the API at base. A
// test app whose sandbox provides no registry gets the harness's
// (testdata/install_registry.tf).
func syncConfig(tb testing.TB, base, token, appID, dir string) {
	tb.Helper()
	if !sandboxHasRegistry(tb, dir) {
		withRegistry := filepath.Join(tb.TempDir(), "app")
		copyDir(tb, dir, withRegistry)
		tf, err := os.ReadFile(installRegistryTF)
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(withRegistry, "sandbox", "install_registry.tf"), tf, 0o644); err != nil {
			tb.Fatal(err)
		}
		dir = withRegistry
	}
	archive, err := appconfig.ArchiveDir(os.DirFS(dir), ".")
	if err != nil {
		tb.Fatal(err)
	}
	req, _ := http.NewRequest("POST", base+"/v1/apps/"+appID+"/configs", bytes.NewReader(archive))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/gzip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		tb.Fatalf("sync %s: %d %s", dir, resp.StatusCode, b)
	}
}

// installRegistryTF is the harness's install registry for test apps.
var installRegistryTF, _ = filepath.Abs("testdata/install_registry.tf")

// sandboxHasRegistry says the app's sandbox outputs registry_address.
func sandboxHasRegistry(tb testing.TB, dir string) bool {
	files, err := filepath.Glob(filepath.Join(dir, "sandbox", "*.tf"))
	if err != nil {
		tb.Fatal(err)
	}
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), `output "registry_address"`) {
			return true
		}
	}
	return false
}

// newInstall creates an install through the API and starts its runner with
// the registration token the API answered (the runner registers itself).
func (s *stack) newInstall(name string, inputs ...map[string]any) (string, *process) {
	s.t.Helper()
	return s.newInstallWithRunner(name, nil, inputs...)
}

// newInstallWithRunner is newInstall, with runnerEnv added to its runner's
// environment (e.g. OUTPOST_CONCURRENCY=1).
func (s *stack) newInstallWithRunner(name string, runnerEnv []string, inputs ...map[string]any) (string, *process) {
	s.t.Helper()
	var created struct {
		ID     string `json:"id"`
		Runner struct {
			RegistrationToken string `json:"registration_token"`
		} `json:"runner"`
	}
	if code := s.do("POST", "/v1/installs", map[string]any{"app_id": s.install.AppID, "name": name, "inputs": inputs}, &created); code != http.StatusCreated {
		s.t.Fatalf("create install: %d %+v", code, created)
	}
	s.runTok = created.Runner.RegistrationToken
	s.tokenFile = filepath.Join(s.t.TempDir(), "token")
	s.stopSandboxRegistries(created.ID)
	return created.ID, s.startRunner(append([]string{"OUTPOST_TOKEN_FILE=" + s.tokenFile}, runnerEnv...)...)
}

// provisionedDemo starts a stack, syncs app (the demo app, or a copy of it)
// and provisions an install of it named name.
func provisionedDemo(tb testing.TB, app, name string) (*stack, string) {
	tb.Helper()
	s := newStack(tb, stackOptions{})
	s.syncConfig(app)
	inst, _ := s.newInstall(name, map[string]any{"name": "db_password", "value": name + "-pa55", "sensitive": true})
	if op := s.waitOp(inst, s.startOp(inst, "/provision", nil).ID, 5*time.Minute); op.Status != status.OpSucceeded {
		tb.Fatalf("provision: %s %q %+v", op.Status, op.Error, op.Steps)
	}
	return s, inst
}

func (s *stack) startOp(installID, path string, body any) operation {
	s.t.Helper()
	var op operation
	if code := s.do("POST", "/v1/installs/"+installID+path, body, &op); code != http.StatusAccepted {
		s.t.Fatalf("POST %s: %d %+v", path, code, op)
	}
	return op
}

func (s *stack) getOp(installID, opID string, wait int) operation {
	s.t.Helper()
	var op operation
	if code := s.do("GET", fmt.Sprintf("/v1/installs/%s/operations/%s?wait=%d", installID, opID, wait), nil, &op); code != http.StatusOK {
		s.t.Fatalf("GET operation: %d", code)
	}
	return op
}

// provisioned starts a provision of the install and waits, within, for it
// to succeed; the test fails if it does not.
func (s *stack) provisioned(inst string, within time.Duration) operation {
	s.t.Helper()
	op := s.waitOp(inst, s.startOp(inst, "/provision", nil).ID, within)
	if op.Status != status.OpSucceeded {
		s.t.Fatalf("provision of %s: %s %q %+v", inst, op.Status, op.Error, op.Steps)
	}
	return op
}

func (s *stack) waitOp(installID, opID string, within time.Duration) operation {
	s.t.Helper()
	deadline := time.Now().Add(within)
	for {
		op := s.getOp(installID, opID, 20)
		if op.FinishedAt != nil {
			return op
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("operation %s still %s after %s: %+v", opID, op.Status, within, op.Steps)
		}
	}
}

type jobTimes struct {
	CreatedAt  time.Time  `json:"created_at"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt time.Time  `json:"finished_at"`
	InputsAt   *time.Time `json:"inputs_at"`
	Attempts   []struct {
		Status status.Job `json:"status"`
	} `json:"attempts"`
}

// workFrom is when the job could start its work: when it was claimed, or,
// for a job queued early with deferred inputs, when it got them.
func (j jobTimes) workFrom() time.Time {
	if j.InputsAt != nil {
		return *j.InputsAt
	}
	return j.StartedAt
}

func (s *stack) job(id string) jobTimes {
	s.t.Helper()
	var j jobTimes
	if code := s.do("GET", "/v1/jobs/"+id, nil, &j); code != http.StatusOK {
		s.t.Fatalf("GET job %s: %d", id, code)
	}
	return j
}

const exampleDir = "../examples/demo-app"

// Provision the example app end to end: sandbox and components applied in
// dependency order (the diamond's middle in parallel), outputs flowing
// through templates, sensitive values nowhere to be seen; then deprovision
// in reverse order, leaving no state.
func TestProvisionExampleAppEndToEnd(t *testing.T) {
	s := newStack(t, stackOptions{})
	s.syncConfig(exampleDir)
	const secret = "s3cret-pa55word-xyz"
	inst, _ := s.newInstall("cust-a", map[string]any{"name": "db_password", "value": secret, "sensitive": true},
		map[string]any{"name": "region", "value": "eu-central-1"})

	op := s.provisioned(inst, 5*time.Minute)
	if op.WorkflowID != "install/"+inst+"/provision" {
		t.Fatalf("workflow ID %q", op.WorkflowID)
	}
	for _, name := range []string{"sandbox", "network", "database", "cache", "api", "cluster", "web"} {
		st := op.step(t, name)
		if st.Status != status.StepSucceeded || st.Plan == "" || st.ApplyJobID == "" {
			t.Fatalf("step %s = %+v", name, st)
		}
	}
	// Dependency order, and the diamond's middle at the same time.
	net, db, cache, api := s.job(op.step(t, "network").ApplyJobID), s.job(op.step(t, "database").ApplyJobID),
		s.job(op.step(t, "cache").ApplyJobID), s.job(op.step(t, "api").ApplyJobID)
	if db.workFrom().Before(net.FinishedAt) || cache.workFrom().Before(net.FinishedAt) || api.workFrom().Before(db.FinishedAt) || api.workFrom().Before(cache.FinishedAt) {
		t.Fatalf("out of dependency order: network %v-%v database %v-%v cache %v-%v api %v", net.StartedAt, net.FinishedAt,
			db.workFrom(), db.FinishedAt, cache.workFrom(), cache.FinishedAt, api.workFrom())
	}
	dbPlan, cachePlan := s.job(op.step(t, "database").PlanJobID), s.job(op.step(t, "cache").PlanJobID)
	if !(dbPlan.StartedAt.Before(cachePlan.FinishedAt) && cachePlan.StartedAt.Before(dbPlan.FinishedAt)) {
		t.Fatalf("database and cache did not run at the same time: database plan %v-%v, cache plan %v-%v",
			dbPlan.StartedAt, dbPlan.FinishedAt, cachePlan.StartedAt, cachePlan.FinishedAt)
	}

	// Outputs flowed through the templates; the sensitive one is hidden.
	var outs struct {
		Outputs map[string]map[string]struct {
			Value     any  `json:"value"`
			Sensitive bool `json:"sensitive"`
		} `json:"outputs"`
	}
	s.do("GET", "/v1/installs/"+inst+"/outputs", nil, &outs)
	if r := outs.Outputs["sandbox"]["region"].Value; r != "eu-central-1" {
		t.Fatalf("sandbox region output = %v, want the install's input", r)
	}
	if !outs.Outputs["database"]["url"].Sensitive || outs.Outputs["database"]["url"].Value != nil {
		t.Fatalf("database url shown: %+v", outs.Outputs["database"]["url"])
	}
	if u, _ := outs.Outputs["api"]["url"].Value.(string); !strings.Contains(u, "cust-a.eu-central-1") {
		t.Fatalf("api url %q does not carry the install's name and the sandbox's region", u)
	}

	// The secret appears in no API answer, job log or Temporal history, nor
	// in a dump of the database (manifests, terraform states, outputs).
	s.assertSecretHidden(inst, op, secret)
	if dump := storetest.DatabaseBytes(t, s.store); bytes.Contains(dump, []byte(secret)) || !bytes.Contains(dump, []byte("eu-central-1")) {
		t.Fatalf("a pg_dump of the database (%d bytes) holds the secret, or not the plain input", len(dump))
	}
	s.checkDumpHides(secret) // and the registry's key, the configs sealed
	s.replay(op.WorkflowID)
	s.checkManifestsHoldNoCredential(inst)

	// Every component (the chart too) runs a build the install's own
	// registry holds, by digest.
	comps := s.installComponentList(inst)
	if len(comps) != 6 {
		t.Fatalf("install components %+v, want the six", comps)
	}
	s.checkInstallRegistryHoldsBuilds(inst, comps)

	// The runner reads the chart's health in the install's cluster.
	s.checkWebHealth(inst)
	// The helm chart, after the api, in the install's cluster.
	s.checkWebChart(inst, op, outs.Outputs["api"]["url"].Value.(string))

	de := s.waitOp(inst, s.startOp(inst, "/deprovision", nil).ID, 5*time.Minute)
	if de.Status != status.OpSucceeded {
		t.Fatalf("deprovision: %s %q %+v", de.Status, de.Error, de.Steps)
	}
	api2, db2, net2, sb2 := de.step(t, "api"), de.step(t, "database"), de.step(t, "network"), de.step(t, "sandbox")
	if db2.StartedAt.Before(*api2.FinishedAt) || net2.StartedAt.Before(*db2.FinishedAt) || sb2.StartedAt.Before(*net2.FinishedAt) {
		t.Fatalf("teardown not in reverse order: %+v", de.Steps)
	}
	outs.Outputs = nil
	s.do("GET", "/v1/installs/"+inst+"/outputs", nil, &outs)
	if len(outs.Outputs) != 0 {
		t.Fatalf("outputs left after deprovision: %+v", outs.Outputs)
	}
	for _, name := range []string{"sandbox", "network", "database", "cache", "api", "cluster"} {
		ws := activities.Workspace(inst, name)
		if _, err := s.store.GetTerraformState(context.Background(), s.orgID, ws); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("state of %s left after deprovision: %v", ws, err)
		}
	}
	// Nor anything of the sandbox on the machine: its registry and cluster
	// stopped, their directory gone.
	if _, err := os.Stat(filepath.Join("/tmp/outpost-sandboxes", inst)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the sandbox's directory is left after deprovision: %v", err)
	}
}

// assertSecretHidden looks for secret everywhere a person could see it.
func (s *stack) assertSecretHidden(inst string, op operation, secret string) {
	s.t.Helper()
	for _, path := range []string{"/v1/installs/" + inst, "/v1/installs/" + inst + "/operations/" + op.ID,
		"/v1/installs/" + inst + "/outputs", "/v1/installs/" + inst + "/jobs"} {
		var raw json.RawMessage
		s.do("GET", path, nil, &raw)
		if strings.Contains(string(raw), secret) {
			s.t.Fatalf("GET %s shows the secret: %s", path, raw)
		}
	}
	for _, st := range op.Steps {
		for _, id := range []string{st.PlanJobID, st.ApplyJobID} {
			if id != "" && s.logsContain(id, secret) {
				s.t.Fatalf("the logs of job %s (%s) show the secret", id, st.Name)
			}
		}
	}
	iter := s.client.GetWorkflowHistory(context.Background(), op.WorkflowID, "", false, 0)
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			s.t.Fatal(err)
		}
		b, _ := json.Marshal(ev)
		if bytes.Contains(b, []byte(secret)) {
			s.t.Fatalf("Temporal history of %s holds the secret in event %d (%s)", op.WorkflowID, ev.EventId, ev.EventType)
		}
	}
}

// forgeApproval sends an approval signal straight to Temporal, past the
// API (as anyone who reaches the Temporal UI or frontend could), and checks
// that it applies nothing: the step still waits, with no apply job.
func (s *stack) forgeApproval(inst, opID, workflowID, step string) {
	s.t.Helper()
	err := s.client.SignalWorkflow(context.Background(), workflowID, "", contract.ApprovalSignal, contract.Approval{Step: step, Approve: true})
	if err != nil {
		s.t.Fatalf("forged signal: %v", err)
	}
	time.Sleep(3 * time.Second) // the workflow has long read the store by then
	for _, st := range s.getOp(inst, opID, 0).Steps {
		if st.Name == step && (st.Status != status.StepWaitingApproval || st.ApplyJobID != "") {
			s.t.Fatalf("a forged approval signal moved step %s on: %+v", step, st)
		}
	}
}

// Under prompt approval each plan waits; approve goes on; a no-op
// re-provision skips every apply; deny stops the operation cleanly.
func TestApprovalPromptAndNoOp(t *testing.T) {
	s := newStack(t, stackOptions{})
	s.syncConfig(exampleDir)
	inst, _ := s.newInstall("cust-b", map[string]any{"name": "db_password", "value": "pw", "sensitive": true})
	if code := s.do("PUT", "/v1/installs/"+inst+"/approval-mode", map[string]string{"approval_mode": "prompt"}, nil); code != http.StatusOK {
		t.Fatalf("set approval mode: %d", code)
	}
	op := s.startOp(inst, "/provision", nil)
	approved := map[string]bool{}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		cur := s.getOp(inst, op.ID, 0)
		if cur.FinishedAt != nil {
			if cur.Status != status.OpSucceeded {
				t.Fatalf("provision under prompt: %s %q %+v", cur.Status, cur.Error, cur.Steps)
			}
			break
		}
		for _, st := range cur.Steps {
			if st.Status == status.StepWaitingApproval && !approved[st.Name] {
				// A terraform plan, or the helm chart's diff of objects.
				want := "terraform_data"
				if st.Name == "web" {
					want = "+++ b/Deployment/demo/web"
				}
				if !strings.Contains(st.Plan, want) {
					t.Fatalf("step %s waits for approval without showing its plan: %q", st.Name, st.Plan)
				}
				if st.ApplyJobID != "" {
					t.Fatalf("step %s applied before approval", st.Name)
				}
				if len(approved) == 0 {
					s.forgeApproval(inst, op.ID, op.WorkflowID, st.Name)
				}
				path := fmt.Sprintf("/v1/installs/%s/operations/%s/steps/%s/approve", inst, op.ID, st.Name)
				if code := s.do("POST", path, nil, nil); code != http.StatusAccepted {
					t.Fatalf("approve %s: %d", st.Name, code)
				}
				approved[st.Name] = true
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("provision did not finish: %+v", cur.Steps)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(approved) != 7 {
		t.Fatalf("approved %v, want all seven steps", approved)
	}
	s.replay(op.WorkflowID) // the approvals, signals and helm steps replay

	// Nothing changed: every plan is a no-op, nothing waits, nothing applies;
	// api's hooks run all the same (api's step runs: its plan).
	re := s.waitOp(inst, s.startOp(inst, "/reprovision", nil).ID, 5*time.Minute)
	if re.Status != status.OpSucceeded {
		t.Fatalf("reprovision: %s %q", re.Status, re.Error)
	}
	for _, st := range re.Steps {
		want := status.StepNoChanges
		if st.Name == "before:migrate:api" || st.Name == "after:warm_cache:api" {
			want = status.StepSucceeded
		}
		if st.Status != want || st.ApplyJobID != "" {
			t.Fatalf("no-op reprovision step %+v", st)
		}
	}

	// Plan only: every step planned, nothing applied, nothing changes.
	po := s.waitOp(inst, s.startOp(inst, "/deprovision", map[string]bool{"plan_only": true}).ID, 5*time.Minute)
	if po.Status != status.OpSucceeded {
		t.Fatalf("plan-only deprovision: %s %q", po.Status, po.Error)
	}
	for _, st := range po.Steps {
		// The chart's teardown plan needs no job: the whole release goes.
		planned := st.PlanJobID != "" || st.Name == "web" && strings.Contains(st.Plan, `helm uninstall of release "web"`)
		if st.Status != status.StepPlanned || !planned || st.ApplyJobID != "" {
			t.Fatalf("plan-only step %+v, want planned (with a plan job for terraform) and no apply", st)
		}
	}
	var outs struct {
		Outputs map[string]any `json:"outputs"`
	}
	s.do("GET", "/v1/installs/"+inst+"/outputs", nil, &outs)
	if len(outs.Outputs) != 7 {
		t.Fatalf("a plan-only deprovision changed the outputs: %+v", outs.Outputs)
	}

	// Deny: the teardown of api waits, is denied, and ends cleanly.
	td := s.startOp(inst, "/components/api/teardown", nil)
	waitFor(t, 2*time.Minute, "api's destroy plan to wait for approval", func() bool {
		for _, st := range s.getOp(inst, td.ID, 0).Steps {
			if st.Name == "api" && st.Status == status.StepWaitingApproval {
				return true
			}
		}
		return false
	})
	if code := s.do("POST", "/v1/installs/"+inst+"/operations/"+td.ID+"/steps/api/deny", nil, nil); code != http.StatusAccepted {
		t.Fatalf("deny: %d", code)
	}
	denied := s.waitOp(inst, td.ID, time.Minute)
	if denied.Status != status.OpDenied || denied.step(t, "api").Status != status.StepDenied || denied.step(t, "api").ApplyJobID != "" {
		t.Fatalf("denied teardown = %+v", denied)
	}
	// The install is free again.
	if code := s.do("POST", "/v1/installs/"+inst+"/components/api/deploy", nil, nil); code != http.StatusAccepted {
		t.Fatalf("a new operation after the denial: %d", code)
	}
}

// A component whose terraform fails marks the operation failed with
// terraform's diagnostic, and what depends on it does not run.
func TestFailingComponentStopsDependents(t *testing.T) {
	s := newStack(t, stackOptions{})
	s.syncConfig("testdata/failing-app")
	inst, _ := s.newInstall("cust-c")
	op := s.waitOp(inst, s.startOp(inst, "/provision", nil).ID, 5*time.Minute)
	if op.Status != status.OpFailed {
		t.Fatalf("provision of a failing app: %s", op.Status)
	}
	broken := op.step(t, "broken")
	if broken.Status != status.StepFailed || !strings.Contains(broken.Error, "local-exec") || !strings.Contains(op.Error, "broken") {
		t.Fatalf("broken step %+v, operation error %q: want terraform's diagnostic", broken, op.Error)
	}
	if after := op.step(t, "after"); after.Status != status.StepSkipped || after.PlanJobID != "" {
		t.Fatalf("dependent of the failed component ran: %+v", after)
	}
	if sb := op.step(t, "sandbox"); sb.Status != status.StepSucceeded {
		t.Fatalf("sandbox %+v", sb)
	}
	// One operation at a time: a second one while none runs is accepted…
	second := s.startOp(inst, "/provision", nil)
	// …and a third while that one runs is refused.
	var e struct{ Code string }
	if code := s.do("POST", "/v1/installs/"+inst+"/deprovision", nil, &e); code != http.StatusConflict {
		t.Fatalf("a concurrent operation: %d %+v, want 409", code, e)
	}
	s.waitOp(inst, second.ID, 5*time.Minute)
}

// The runner killed during terraform apply: the attempt is lost, its state
// lock released, the retry applies, and the state is intact.
func TestRunnerKilledDuringApply(t *testing.T) {
	s := newStack(t, stackOptions{})
	trace := filepath.Join(t.TempDir(), "trace")
	dir := t.TempDir()
	copyDir(t, "testdata/slow-app", dir)
	cfg := filepath.Join(dir, "components", "slow.toml")
	b, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, bytes.ReplaceAll(b, []byte("TRACE_FILE"), []byte(trace)), 0o644)
	s.syncConfig(dir)
	inst, first := s.newInstall("cust-d")
	op := s.startOp(inst, "/provision", nil)
	waitFor(t, 3*time.Minute, "the slow apply to start", func() bool {
		b, _ := os.ReadFile(trace)
		return bytes.Contains(b, []byte("start"))
	})
	first.kill()
	s.startRunner("OUTPOST_TOKEN_FILE=" + s.tokenFile) // a restart: the token file holds its runner token
	done := s.waitOp(inst, op.ID, 5*time.Minute)
	if done.Status != status.OpSucceeded {
		t.Fatalf("provision after the runner was killed: %s %q %+v", done.Status, done.Error, done.Steps)
	}
	apply := s.job(done.step(t, "slow").ApplyJobID)
	if len(apply.Attempts) != 2 || apply.Attempts[0].Status != status.JobLost || apply.Attempts[1].Status != status.JobSucceeded {
		t.Fatalf("apply attempts = %+v, want [lost, succeeded]", apply.Attempts)
	}
	ws := activities.Workspace(inst, "slow")
	if l, err := s.store.GetTerraformStateLock(context.Background(), s.orgID, ws); err != nil || l != nil {
		t.Fatalf("lock left on %s: %+v %v", ws, l, err)
	}
	outs, err := s.store.TerraformStateOutputs(context.Background(), s.orgID, ws)
	if err != nil || outs["done"].Value == nil {
		t.Fatalf("state of %s after the retry: %+v %v", ws, outs, err)
	}
	// The killed attempt's terraform did not go on: the trace ends with one
	// start, then the retry's start and end.
	b, _ = os.ReadFile(trace)
	if got := strings.Count(string(b), "end"); got != 1 {
		t.Fatalf("trace:\n%s\nwant exactly one finished apply", b)
	}
}

func copyDir(t testing.TB, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// An install whose runner never comes: the operation shows it is waiting
// for the runner, then fails saying so.
func TestProvisionWaitsForTheRunner(t *testing.T) {
	s := newStack(t, stackOptions{runnerTimeout: 3 * time.Second})
	s.syncConfig("testdata/failing-app")
	var created struct {
		ID string `json:"id"`
	}
	s.do("POST", "/v1/installs", map[string]any{"app_id": s.install.AppID, "name": "no-runner"}, &created)
	op := s.startOp(created.ID, "/provision", nil)
	waitFor(t, time.Minute, "the operation to wait for the runner", func() bool {
		var inst struct{ Status status.Install }
		s.do("GET", "/v1/installs/"+created.ID, nil, &inst)
		return s.getOp(created.ID, op.ID, 0).Status == status.OpWaitingForRunner && inst.Status == status.InstallWaitingForRunner
	})
	done := s.waitOp(created.ID, op.ID, time.Minute)
	if done.Status != status.OpFailed || !strings.Contains(done.Error, "did not come online within 3s") {
		t.Fatalf("operation = %s %q, want a failure naming the runner", done.Status, done.Error)
	}
	if got := s.activitiesScheduled(op.WorkflowID); !slices.Contains(got, "WaitForRunner") {
		t.Errorf("activities scheduled %v: want WaitForRunner, the runner being offline", got)
	}
}

// The embedded default: the same loop on SQLite and the in-process bus —
// a debug command, then the example app provisioned and deprovisioned.
func TestEmbeddedSQLiteStack(t *testing.T) {
	s := newStack(t, stackOptions{dialect: store.SQLite})
	s.syncConfig(exampleDir)
	inst, _ := s.newInstall("cust-e", map[string]any{"name": "db_password", "value": "pw", "sensitive": true})
	var c command
	if code := s.do("POST", "/v1/installs/"+inst+"/commands", map[string]any{"command": []string{"echo", "on sqlite"}}, &c); code != http.StatusAccepted {
		t.Fatalf("command: %d", code)
	}
	var done command
	waitFor(t, time.Minute, "the command", func() bool {
		s.do("GET", "/v1/installs/"+inst+"/commands/"+c.ID+"?wait=10", nil, &done)
		return status.JobTerminal(done.Status)
	})
	if done.Status != status.JobSucceeded || done.Output != "on sqlite\n" {
		t.Fatalf("command on SQLite: %+v", done)
	}
	// The provision runs api's two hooks too (before:migrate:api, after:warm_cache:api).
	// In this order: a map's would sometimes deprovision first.
	for _, o := range []struct {
		path  string
		steps int
	}{{"/provision", 9}, {"/deprovision", 7}} {
		op := s.waitOp(inst, s.startOp(inst, o.path, nil).ID, 5*time.Minute)
		if op.Status != status.OpSucceeded || len(op.Steps) != o.steps {
			t.Fatalf("%s on SQLite: %s %q %+v", o.path, op.Status, op.Error, op.Steps)
		}
	}
}

// replay replays the workflow's recorded history against today's workflow
// code: a non-deterministic workflow (map order, a changed sequence of
// activities) fails here instead of in production after a worker restart.
func (s *stack) replay(workflowID string) {
	s.t.Helper()
	events := s.history(workflowID)
	r := sdkworker.NewWorkflowReplayer()
	worker.RegisterWorkflows(r)
	h := &history.History{Events: events}
	if err := r.ReplayWorkflowHistory(nil, h); err != nil {
		s.t.Fatalf("replaying %s (%d events): %v", workflowID, len(events), err)
	}
	if dir := os.Getenv("OUTPOST_RECORD_HISTORIES"); dir != "" {
		s.recordHistory(dir, workflowID, h)
	}
}

// recordHistory writes a replayed history as JSON (the format of
// `temporal workflow show --output json`, which the replayer reads) into
// dir, for workflows/testdata/histories (see workflows/replay_test.go).
func (s *stack) recordHistory(dir, workflowID string, h *history.History) {
	s.t.Helper()
	b, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(h)
	if err != nil {
		s.t.Fatal(err)
	}
	name := strings.NewReplacer("/", "_", " ", "_").Replace(s.t.Name() + "-" + workflowID)
	file := filepath.Join(dir, name+".json")
	for n := 2; ; n++ { // a later run of the same workflow ID is kept beside the first
		if _, err := os.Stat(file); errors.Is(err, os.ErrNotExist) {
			break
		}
		file = filepath.Join(dir, fmt.Sprintf("%s-%d.json", name, n))
	}
	if err := os.WriteFile(file, b, 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// history is a workflow's Temporal history.
func (s *stack) history(workflowID string) []*history.HistoryEvent {
	s.t.Helper()
	iter := s.client.GetWorkflowHistory(context.Background(), workflowID, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var events []*history.HistoryEvent
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			s.t.Fatal(err)
		}
		events = append(events, ev)
	}
	return events
}

// activitiesScheduled are the (non-local) activities a workflow scheduled,
// by type, in order.
func (s *stack) activitiesScheduled(workflowID string) []string {
	s.t.Helper()
	var types []string
	for _, ev := range s.history(workflowID) {
		if at := ev.GetActivityTaskScheduledEventAttributes(); at != nil {
			types = append(types, at.GetActivityType().GetName())
		}
	}
	return types
}
