package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/outpost-dev/outpost/api/wire"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/api/authlimit"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

// testEnv is the API on a real PostgreSQL database, served over HTTP, with an
// org "acme" and its admin token.
type testEnv struct {
	t     *testing.T
	store *store.Store
	srv   *Server
	http  *httptest.Server
	ops   *recordingOps
	org   store.Org
	token string
	// password is the org's local admin's (user store.LocalAdminName).
	password string
	// followIdle receives the state of every log follower that waits.
	followIdle chan followState
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	return newTestEnvWithOps(t, newRecordingOps())
}

// newTestEnvWithOps is newTestEnv with the given Operations; nil serves the
// API without any. configure, if given, changes the API's Config first.
func newTestEnvWithOps(t *testing.T, ops *recordingOps, configure ...func(*Config)) *testEnv {
	t.Helper()
	t.Parallel()
	s := storetest.Open(t, store.Postgres)
	cfg := Config{Store: s, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	if ops != nil {
		cfg.Ops = ops
	}
	// Tests of other things fail authentication often, all from loopback.
	cfg.AuthLimiter = authlimit.New(authlimit.Config{Burst: 1 << 30})
	for _, f := range configure {
		f(&cfg)
	}
	srv := New(cfg)
	// Log followers must be woken by the bus: the fallback tick never fires
	// in a test.
	srv.followTick = time.Hour
	idle := make(chan followState, 1000)
	srv.followIdle = func(j store.Job, sent store.LogCursor) {
		select {
		case idle <- followState{status: j.Status, sent: sent}:
		default:
		}
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	a, err := s.CreateOrgWithAdmin(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	return &testEnv{t: t, store: s, srv: srv, http: ts, ops: ops, org: a.Org, token: a.Token, password: a.Password, followIdle: idle}
}

// followState is where a log follower was when it started waiting.
type followState struct {
	status status.Job
	sent   store.LogCursor
}

// with returns the environment for a subtest.
func (e *testEnv) with(t *testing.T) *testEnv {
	c := *e
	c.t = t
	return &c
}

// response is an answer read whole.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) String() string { return fmt.Sprintf("%d %s", r.status, r.body) }

// apiError decodes an error body.
func (r response) apiError(t *testing.T) protocol.Error {
	t.Helper()
	var e protocol.Error
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Fatalf("error body %q is not a protocol.Error: %v", r.body, err)
	}
	return e
}

// send calls the API with a token ("" for none). body is sent as is when it
// is a string, []byte or io.Reader, as JSON otherwise.
func (e *testEnv) send(method, path, token string, body any) response {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	case io.Reader: // of unknown length: sent chunked
		rd = b
	default:
		data, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, e.http.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return e.do(req)
}

func (e *testEnv) do(req *http.Request) response {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(req.Context(), 30*time.Second)
	defer cancel()
	res, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		e.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatalf("%s %s: read body: %v", req.Method, req.URL.Path, err)
	}
	return response{status: res.StatusCode, header: res.Header, body: data}
}

// call calls the API with the org's token, fails the test unless the status
// is want, and decodes the body into out (if not nil).
func (e *testEnv) call(method, path string, body any, want int, out any) response {
	e.t.Helper()
	return e.callAs(e.token, method, path, body, want, out)
}

func (e *testEnv) callAs(token, method, path string, body any, want int, out any) response {
	e.t.Helper()
	res := e.send(method, path, token, body)
	if res.status != want {
		e.t.Fatalf("%s %s: got %s, want %d", method, path, res, want)
	}
	if out != nil {
		if err := json.Unmarshal(res.body, out); err != nil {
			e.t.Fatalf("%s %s: decode %s: %v", method, path, res.body, err)
		}
	}
	return res
}

// installAnswer decodes an install answer: the one that created it holds its
// runner's registration token.
type installAnswer struct {
	wire.Install
	Runner *struct {
		ID                string `json:"id"`
		RegistrationToken string `json:"registration_token"`
	} `json:"runner"`
}

// fixture creates, through the API, an app "demo" and an install "customer-1"
// of it, and returns them with the install's registration token.
func (e *testEnv) fixture() (app store.App, inst installAnswer) {
	e.t.Helper()
	e.call("POST", "/v1/apps", map[string]any{"name": "demo"}, 201, &app)
	e.call("POST", "/v1/installs", map[string]any{"app_id": app.ID, "name": "customer-1",
		"inputs": []map[string]any{{"name": "region", "value": "eu-west-1"}}}, 201, &inst)
	return app, inst
}

// world is an org with one of everything: an app with a component, an
// install with a queued job and a command.
type world struct {
	app  store.App
	cmp  store.Component
	inst installAnswer
	job  store.Job
	cmd  wire.Command
}

func (e *testEnv) world() world {
	e.t.Helper()
	var w world
	w.app, w.inst = e.fixture()
	e.call("POST", "/v1/apps/"+w.app.ID+"/components", map[string]any{"name": "db", "type": "terraform_module"}, 201, &w.cmp)
	w.job = e.enqueueJob(w.inst, "wf/"+w.inst.ID)
	e.call("POST", "/v1/installs/"+w.inst.ID+"/commands", map[string]any{"command": []string{"uptime"}}, 202, &w.cmd)
	return w
}

// enqueueJob queues a noop job for the install's runner, the way RunJob does.
func (e *testEnv) enqueueJob(inst installAnswer, key string) store.Job {
	e.t.Helper()
	job, _, err := e.store.EnqueueJob(context.Background(), store.JobSpec{Key: key, OrgID: e.org.ID,
		RunnerID: inst.Runner.ID, InstallID: &inst.ID, Type: protocol.JobTypeNoop,
		Manifest: json.RawMessage(`{"lines":["secret-manifest-value"]}`)})
	if err != nil {
		e.t.Fatal(err)
	}
	return job
}

// snapshot is every row of every table but the audit log (which records
// refused requests too: audit_test.go checks it), to check a refused request
// changed nothing.
func (e *testEnv) snapshot() map[string][]string {
	e.t.Helper()
	out := e.snapshotAll()
	delete(out, "audit_events")
	return out
}

// snapshotAll is every row of every table.
func (e *testEnv) snapshotAll() map[string][]string {
	e.t.Helper()
	db := e.store.DB()
	tables, err := db.Migrator().GetTables()
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string][]string{}
	for _, table := range tables {
		var rows []map[string]any
		if err := db.Table(table).Find(&rows).Error; err != nil {
			e.t.Fatalf("read %s: %v", table, err)
		}
		for _, row := range rows {
			// A credential's last use is authentication's bookkeeping, written
			// by any request (also a refused one): not a change it made.
			delete(row, "last_used_at")
			delete(row, "last_seen_at")
			b, _ := json.Marshal(row) // maps marshal with sorted keys
			out[table] = append(out[table], string(b))
		}
		sort.Strings(out[table])
	}
	return out
}

// recordingOps stands in for the Temporal side: it records what it was asked
// and lets a test decide when a workflow closes.
type recordingOps struct {
	mu         sync.Mutex
	started    []store.InstallCommand
	cancelled  []string
	decisions  []string // "<workflow ID> <step> <approve>"
	closed     map[string]chan struct{}
	startErr   error
	awaiting   chan string // receives the workflow ID each time AwaitWorkflow starts waiting
	builds     []store.Build
	buildErr   error
	bundles    []store.SupportBundle
	actionRuns []store.ActionRun
	runbooks   []store.RunbookRun // each StartRunbookRun (a resume again)
	gates      []string           // "<workflow ID> <step>" of each SignalRunbookApproval
	logs       []string
	acceptOps  bool     // StartOperation accepts (and does nothing): the test plays the workflow's part
	deliveries []string // "<org>/<delivery ID>" of each StartDelivery
}

func newRecordingOps() *recordingOps {
	return &recordingOps{closed: map[string]chan struct{}{}, awaiting: make(chan string, 16)}
}

func (o *recordingOps) StartInstallCommand(_ context.Context, cmd store.InstallCommand) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return recordStart(o, o.startErr, &o.started, cmd, cmd.WorkflowID)
}

func (o *recordingOps) StartActionRun(_ context.Context, run store.ActionRun) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return recordStart(o, o.startErr, &o.actionRuns, run, run.WorkflowID)
}

func (o *recordingOps) StartSupportBundle(_ context.Context, b store.SupportBundle) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return recordStart(o, o.startErr, &o.bundles, b, b.WorkflowID)
}

func (o *recordingOps) StartKubeLogs(_ context.Context, workflowID string, _ contract.KubeLogsRequest) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return recordStart(o, o.startErr, &o.logs, workflowID, workflowID)
}

// recordStart fails with fail if set, or records item as started and its
// workflow as open; o.mu is held.
func recordStart[T any](o *recordingOps, fail error, started *[]T, item T, workflowID string) error {
	if fail != nil {
		return fail
	}
	*started = append(*started, item)
	o.closed[workflowID] = make(chan struct{})
	return nil
}

func (o *recordingOps) CancelWorkflow(_ context.Context, workflowID string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.cancelled = append(o.cancelled, workflowID)
	return nil
}

func (o *recordingOps) AwaitWorkflow(ctx context.Context, workflowID string) error {
	o.mu.Lock()
	ch := o.closed[workflowID]
	o.mu.Unlock()
	if ch == nil {
		return errors.New("workflow not found: " + workflowID)
	}
	o.awaiting <- workflowID
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// StartOperation records nothing: operations are tested end to end on the
// real Temporal server (package e2e).
func (o *recordingOps) StartOperation(context.Context, store.InstallOperation) error {
	if o.acceptOps {
		return nil
	}
	return errors.New("operations are not part of these tests")
}

// SignalApproval records the decision (the workflow that receives it is
// tested end to end).
func (o *recordingOps) SignalApproval(_ context.Context, workflowID, step string, approve bool) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.decisions = append(o.decisions, fmt.Sprintf("%s %s %t", workflowID, step, approve))
	return nil
}

// SetDriftSchedule: schedules are tested end to end (package e2e); deleting
// an install deletes its schedule, which succeeds here.
func (o *recordingOps) SetDriftSchedule(context.Context, string, time.Duration) error { return nil }

// StartBuild records the build whose workflow it was asked to start.
func (o *recordingOps) StartBuild(_ context.Context, b store.Build) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return recordStart(o, o.buildErr, &o.builds, b, b.WorkflowID)
}

// StartRelease and SignalRelease are tested on the e2e stack.
func (o *recordingOps) StartRelease(context.Context, store.Release) error   { return nil }
func (o *recordingOps) SignalRelease(context.Context, string, string) error { return nil }

// failBuildStarts makes every StartBuild fail with err (nil: succeed again).
func (o *recordingOps) failBuildStarts(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buildErr = err
}

// startedBuilds are the builds whose workflows were started, in order.
func (o *recordingOps) startedBuilds() []store.Build {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]store.Build(nil), o.builds...)
}

// failStarts makes every StartInstallCommand fail with err.
func (o *recordingOps) failStarts(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.startErr = err
}

// close closes a workflow, waking its awaiters.
func (o *recordingOps) close(workflowID string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	close(o.closed[workflowID])
}

func (o *recordingOps) startedCommands() []store.InstallCommand {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]store.InstallCommand(nil), o.started...)
}

func (o *recordingOps) cancelledWorkflows() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.cancelled...)
}

func newRequest(t *testing.T, e *testEnv, method, path string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, e.http.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
