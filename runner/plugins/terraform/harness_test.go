package terraform_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/api/gateway"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/internal/testutil/jobproctest"
	"github.com/outpost-dev/outpost/internal/testutil/terraformtest"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner"
	"github.com/outpost-dev/outpost/runner/plugins/terraform"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

// TestMain lets the test binary be the runner's job process too: the runner
// under test re-executes it as "job --dir DIR", as outpost-runner
// re-executes itself.
func TestMain(m *testing.M) { os.Exit(jobproctest.Main(m)) }

// harness is the whole path of a terraform job: a store on PostgreSQL, the
// gateway over real HTTP (with its state backend and lease reaper), and a
// real runner whose job processes run real terraform.
type harness struct {
	t         *testing.T
	s         *store.Store
	srv       *httptest.Server
	org       store.Org
	inst      store.Install
	runnerID  string
	regToken  string
	tokenFile string
	workDir   string
	tf        string
	stop      func()
	policies  string // the runner's --plan-policies (none when empty)
}

// Intervals of the harness's gateway: a short lease, so that a lost attempt
// is noticed quickly.
var intervals = protocol.Intervals{ClaimWaitMS: 2000, JobHeartbeatMS: 500, LeaseMS: 2500, RunnerHeartbeatMS: 30_000}

func newHarness(t *testing.T) *harness {
	t.Helper()
	ctx := context.Background()
	h := &harness{t: t, tf: terraformtest.Find(t), s: storetest.Open(t, store.Postgres),
		tokenFile: filepath.Join(t.TempDir(), "runner-token"), workDir: t.TempDir()}
	var (
		err error
		app store.App
		r   store.Runner
	)
	h.org, _, app = storetest.NewOrgApp(t, h.s, "acme")
	if h.inst, r, h.regToken, err = h.s.CreateInstall(ctx, h.org.ID, app.ID, "customer-1", nil); err != nil {
		t.Fatal(err)
	}
	h.runnerID = r.ID
	g := gateway.New(gateway.Config{Store: h.s, Intervals: intervals, ReapInterval: 200 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))})
	gctx, stopGateway := context.WithCancel(ctx)
	gdone := make(chan struct{})
	go func() { defer close(gdone); g.Run(gctx) }()
	h.srv = httptest.NewServer(g.Handler())
	t.Cleanup(func() {
		h.srv.CloseClientConnections()
		h.srv.Close()
		stopGateway()
		<-gdone
	})
	h.startRunner()
	return h
}

// startRunner starts the install's runner; h.stop stops it.
func (h *harness) startRunner() {
	h.t.Helper()
	exe, err := os.Executable()
	if err != nil {
		h.t.Fatal(err)
	}
	r, err := runner.New(runner.Config{GatewayURL: h.srv.URL, Token: h.regToken, TokenFile: h.tokenFile,
		Concurrency: 2, WorkDir: h.workDir, Executable: exe, Terraform: terraform.Options{Binary: h.tf}, ShutdownTimeout: time.Minute, PlanPolicies: h.policies,
		Logger: slog.New(slog.NewTextHandler(h.t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	var once sync.Once
	h.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				h.t.Errorf("runner: %v", err)
			}
		})
	}
	h.t.Cleanup(h.stop)
}

// manifest is a terraform job on ws of the harness's gateway; enqueue adds
// the state credential.
func (h *harness) manifest(op, ws string, mod []byte) protocol.TerraformManifest {
	state := h.srv.URL + strings.Replace(protocol.PathState, "{workspace}", ws, 1)
	lock := h.srv.URL + strings.Replace(protocol.PathLock, "{workspace}", ws, 1)
	return protocol.TerraformManifest{Operation: op, Workspace: ws, Module: mod,
		Backend: protocol.TerraformBackend{Address: state, LockAddress: lock, UnlockAddress: lock}}
}

// enqueue queues the job with a fresh state credential, as the control plane
// does.
func (h *harness) enqueue(key string, m protocol.TerraformManifest) (store.Job, string) {
	h.t.Helper()
	return h.enqueueSpec(key, m, false)
}

// enqueueSpec is enqueue, with the job's inputs deferred when asked.
func (h *harness) enqueueSpec(key string, m protocol.TerraformManifest, deferInputs bool) (store.Job, string) {
	h.t.Helper()
	tok := store.NewStateToken()
	m.Backend.Password = tok
	raw, err := json.Marshal(m)
	if err != nil {
		h.t.Fatal(err)
	}
	j, _, err := h.s.EnqueueJob(context.Background(), store.JobSpec{Key: key, OrgID: h.org.ID, RunnerID: h.runnerID,
		InstallID: &h.inst.ID, Type: protocol.JobTypeTerraform, Manifest: raw, TimeoutMS: 5 * 60_000,
		Workspace: m.Workspace, StateToken: tok, InputsDeferred: deferInputs})
	if err != nil {
		h.t.Fatal(err)
	}
	return j, tok
}

// wait returns the job once it ended (a wait for a state, not a timing
// assertion).
func (h *harness) wait(jobID string) store.Job {
	return storetest.WaitJob(h.t, h.s, jobID, 3*time.Minute)
}

// run queues a job and waits for it to end.
func (h *harness) run(key string, m protocol.TerraformManifest) store.Job {
	h.t.Helper()
	j, _ := h.enqueue(key, m)
	return h.wait(j.ID)
}

// succeeded checks the job succeeded and decodes its outputs into v.
// succeeded fails the test unless the job succeeded, and decodes its
// outputs into v (when v is not nil).
func (h *harness) succeeded(j store.Job, v any) {
	h.t.Helper()
	if j.Status != status.JobSucceeded {
		h.t.Fatalf("job %s (%s) %s: %s\nlogs:\n%s", j.ID, j.Key, j.Status, j.Error, h.logs(j.ID))
	}
	if v == nil {
		return
	}
	if err := json.Unmarshal([]byte(j.Outputs), v); err != nil {
		h.t.Fatalf("outputs of %s: %v: %s", j.Key, err, j.Outputs)
	}
}

func (h *harness) plan(key, ws string, mod []byte, vars map[string]any, destroy bool) (store.Job, protocol.TerraformPlanOutputs) {
	h.t.Helper()
	m := h.manifest(protocol.TerraformPlan, ws, mod)
	m.Destroy = destroy
	m.Variables = map[string]json.RawMessage{}
	for k, v := range vars {
		b, err := json.Marshal(v)
		if err != nil {
			h.t.Fatal(err)
		}
		m.Variables[k] = b
	}
	m.Env = map[string]string{"APP_TEST_REGION": "eu-west"}
	j := h.run(key, m)
	var out protocol.TerraformPlanOutputs
	h.succeeded(j, &out)
	return j, out
}

func (h *harness) apply(key, ws string, mod, planFile []byte) store.Job {
	h.t.Helper()
	m := h.manifest(protocol.TerraformApply, ws, mod)
	m.PlanFile = planFile
	m.Env = map[string]string{"APP_TEST_REGION": "eu-west"}
	return h.run(key, m)
}

// stateOutputs are the workspace's outputs in its latest stored state.
func (h *harness) stateOutputs(ws string) map[string]protocol.TerraformOutput {
	h.t.Helper()
	out, err := h.s.TerraformStateOutputs(context.Background(), h.org.ID, ws)
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

// logs is everything the job wrote, in order.
func (h *harness) logs(jobID string) string { return storetest.JobLogs(h.t, h.s, jobID) }

// lockFree checks nobody holds the workspace's lock.
func (h *harness) lockFree(ws string) {
	h.t.Helper()
	l, err := h.s.GetTerraformStateLock(context.Background(), h.org.ID, ws)
	if err != nil || l != nil {
		h.t.Fatalf("lock of %s: %+v %v; want none", ws, l, err)
	}
}

// lock takes the workspace's lock as terraform does, for the job with its
// state credential.
func (h *harness) lock(ws, jobID, token, lockID, who string) {
	h.t.Helper()
	info, err := json.Marshal(map[string]string{"ID": lockID, "Operation": "OperationTypeApply", "Who": who,
		"Version": "1.5.7", "Created": time.Now().UTC().Format(time.RFC3339Nano), "Path": ""})
	if err != nil {
		h.t.Fatal(err)
	}
	req, err := http.NewRequest("LOCK", h.manifest(protocol.TerraformPlan, ws, nil).Backend.LockAddress, bytes.NewReader(info))
	if err != nil {
		h.t.Fatal(err)
	}
	req.SetBasicAuth(jobID, token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		h.t.Fatalf("LOCK %s by %s: status %d", ws, jobID, resp.StatusCode)
	}
}
