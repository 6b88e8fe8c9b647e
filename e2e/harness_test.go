package e2e

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/outpost-dev/outpost/activities"
	"github.com/outpost-dev/outpost/api"
	"github.com/outpost-dev/outpost/api/gateway"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/dashboard"
	"github.com/outpost-dev/outpost/internal/attemptcred"
	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/localcluster"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
	"github.com/outpost-dev/outpost/worker"
	"github.com/outpost-dev/outpost/worker/devserver"
)

var (
	runnerBin string
	// binDir holds outpost-runner, outpost-runner-helm (next to it, so the
	// runner runs helm jobs) and the local stand-ins: the runners' PATH
	// starts with it, so sandboxes find outpost-registry and outpost-cluster.
	binDir   string
	temporal *devserver.Server
	// kubeAssets holds etcd and kube-apiserver, for the clusters the
	// example sandbox starts (runners pass it to jobs).
	kubeAssets string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "outpost-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binDir, runnerBin = dir, filepath.Join(dir, "outpost-runner")
	if err := testutil.BuildBinaries(dir, "../cmd/outpost-runner", "../cmd/outpost-runner-helm", "../cmd/outpost-registry", "../cmd/outpost-cluster"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	wd, _ := os.Getwd()
	if kubeAssets, err = localcluster.FindAssets(os.Getenv(localcluster.EnvAssets), wd); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	temporal, err = devserver.Start(context.Background(), devserver.Options{UIPort: -1})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start temporal:", err)
		return 1
	}
	defer temporal.Stop()
	return m.Run()
}

// stack is one control plane on real parts: a fresh PostgreSQL database, the
// gateway and API over real HTTP, and a Temporal worker on a task queue of
// its own, against the shared in-process Temporal server.
type stack struct {
	t       testing.TB
	store   *store.Store
	client  client.Client
	queue   string
	worker  sdkworker.Worker
	api     *httptest.Server
	apiURL  string // where do calls the API (api's, or a process's)
	gw      *httptest.Server
	gateway string // the URL runners are given (may be a proxy)
	// publicGateway is the gateway's URL jobs are given (stackOptions).
	publicGateway string
	// publicRegistry is the vendor registry's address jobs are given (stackOptions).
	publicRegistry string
	token          string // the org's API token
	password       string // the org's admin's password (store.LocalAdminName)
	orgID          string
	install        store.Install
	runnerID       string
	runTok         string // the install runner's token
	// tokenFile is where a runner started with a registration token keeps
	// the runner token it got.
	tokenFile     string
	runnerTimeout time.Duration
	// runnerWorkDir, when set, is the work directory of the runners started
	// next (default: a fresh one each).
	runnerWorkDir string
	// registry is the vendor's registry; buildTok the org's build runner's
	// token.
	registry    *registry.Server
	buildTok    string
	buildRunner *process // started by syncConfig
	// sweeping is closed when the worker's sweeper (worker.Sweeper) has stopped.
	sweeping chan struct{}
}

type stackOptions struct {
	intervals protocol.Intervals
	// runnerTimeout is how long operations wait for a runner (default 2m).
	runnerTimeout time.Duration
	// dialect is the store's database (default PostgreSQL).
	dialect string
	// postgres, when set, is the admin URL of the PostgreSQL server the
	// store's database is created on (a test's own server), instead of the
	// shared one.
	postgres string
	// gatewayURL is the gateway's URL as runners reach it, which jobs get
	// (terraform's state backend); default: the gateway's own.
	gatewayURL string
	// vendorRegistry, when set, gives the vendor registry's address as
	// runners reach it (jobs get that one) from its own.
	vendorRegistry func(addr string) string
	// logQuota is each job attempt's log quota (default the gateway's).
	logQuota int64
}

func newStack(t testing.TB, o stackOptions) *stack {
	t.Helper()
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if o.dialect == "" {
		o.dialect = store.Postgres
	}
	var s *store.Store
	if o.postgres != "" {
		s = storetest.OpenPostgres(t, o.postgres)
	} else {
		s = storetest.Open(t, o.dialect)
	}
	iv := o.intervals
	if iv.ClaimWaitMS == 0 {
		iv = protocol.Intervals{ClaimWaitMS: 2000, JobHeartbeatMS: 500, LeaseMS: 4000, RunnerHeartbeatMS: 2000}
	}
	ctx, g := startGateway(t, gateway.Config{Store: s, Logger: log, Intervals: iv, ReapInterval: 250 * time.Millisecond, TouchInterval: time.Second,
		MaxJobLogBytes: o.logQuota, HealthInterval: time.Second})
	tc := dialTemporal(t, log)
	st := &stack{t: t, store: s, client: tc, queue: "e2e-" + strings.ReplaceAll(t.Name(), "/", "-")}
	st.gw = httptest.NewServer(g.Handler())
	t.Cleanup(st.gw.Close)
	st.gateway = st.gw.URL
	st.publicGateway = cmp.Or(o.gatewayURL, st.gw.URL)
	reg, err := registry.Start(ctx, registry.Config{Auth: registry.Tokens{Keys: attemptcred.RegistryKeys(s), Leases: s}})
	if err != nil {
		t.Fatal(err)
	}
	st.registry = reg
	t.Cleanup(func() { st.registry.Close() })
	a := api.New(api.Config{Store: s, Ops: &worker.Operations{Client: tc, TaskQueue: st.queue}, Logger: log, GatewayURL: st.gw.URL,
		VendorRegistry: protocol.RegistryAccess{Address: reg.Addr(), PlainHTTP: true}})
	h := a.Handler()
	dashboard.Register(h, dashboard.Config{Sessions: a, Logger: log})
	st.api = httptest.NewServer(h)
	t.Cleanup(st.api.Close)
	st.apiURL = st.api.URL
	st.runnerTimeout = o.runnerTimeout
	if st.runnerTimeout == 0 {
		st.runnerTimeout = 2 * time.Minute
	}
	st.publicRegistry = st.registry.Addr()
	if o.vendorRegistry != nil {
		st.publicRegistry = o.vendorRegistry(st.publicRegistry)
	}
	st.startWorker()

	tn := storetest.NewTenant(t, s)
	runTok, err := s.IssueRunnerToken(ctx, tn.Org.ID, tn.Runner.ID)
	if err != nil {
		t.Fatal(err)
	}
	st.token, st.password, st.orgID, st.install, st.runnerID, st.runTok = tn.OrgToken, tn.AdminPassword, tn.Org.ID, tn.Install, tn.Runner.ID, runTok
	st.stopSandboxRegistries(tn.Install.ID)
	build, err := s.EnsureBuildRunner(ctx, tn.Org.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st.buildTok, err = s.IssueRunnerToken(ctx, tn.Org.ID, build.ID); err != nil {
		t.Fatal(err)
	}
	return st
}

// startGateway runs a gateway until the test ends (registered after the
// store, so it stops before the store closes); ctx ends with the test.
func startGateway(tb testing.TB, c gateway.Config) (context.Context, *gateway.Gateway) {
	ctx, cancel := context.WithCancel(context.Background())
	g := gateway.New(c)
	gwDone := make(chan struct{})
	go func() { g.Run(ctx); close(gwDone) }()
	tb.Cleanup(func() { cancel(); <-gwDone })
	return ctx, g
}

// dialTemporal is a client of TestMain's Temporal server, closed when the
// test ends.
func dialTemporal(tb testing.TB, log *slog.Logger) client.Client {
	tc, err := client.Dial(client.Options{HostPort: temporal.FrontendAddress(), Namespace: temporal.Namespace(),
		Logger: tlog.NewStructuredLogger(log)})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(tc.Close)
	return tc
}

// sandboxOutputs are the outputs of the install's sandbox, read from the
// store (the API hides sensitive ones).
func (s *stack) sandboxOutputs(installID string) protocol.TerraformApplyOutputs {
	s.t.Helper()
	return s.stepOutputs(installID, status.SandboxStep)
}

// stepOutputs are the recorded outputs of an install's sandbox or
// terraform component, as the store holds them.
func (s *stack) stepOutputs(installID, step string) protocol.TerraformApplyOutputs {
	s.t.Helper()
	outs, err := s.store.ListOutputs(context.Background(), installID)
	if err != nil {
		s.t.Fatal(err)
	}
	var o protocol.TerraformApplyOutputs
	if err := json.Unmarshal([]byte(outs[step]), &o); err != nil {
		s.t.Fatalf("outputs of %s: %v", step, err)
	}
	return o
}

// stopSandboxRegistries stops, when the test ends, the registry a test
// app's sandbox may have started for the install and left running (a test
// that does not deprovision).
func (s *stack) stopSandboxRegistries(installID string) { stopSandboxRegistry(s.t, installID) }

func stopSandboxRegistry(tb testing.TB, installID string) {
	tb.Cleanup(func() { stopSandbox(tb, installID) })
}

// stopSandbox stops the install registry and cluster an install's sandbox
// started, and removes their data.
func stopSandbox(tb testing.TB, installID string) {
	dir := filepath.Join("/tmp/outpost-sandboxes", installID)
	if _, err := os.Stat(dir); err != nil {
		return
	}
	down := exec.Command(filepath.Join(binDir, "outpost-registry"), "down", "-dir", filepath.Join(dir, "registry"))
	if out, err := down.CombinedOutput(); err != nil {
		tb.Logf("stop the install registry of %s: %v\n%s", installID, err, out)
	}
	stopPidFile(filepath.Join(dir, "cluster", "pid"))
	os.RemoveAll(dir)
}

// stopPidFile stops the process a pid file names (the example sandbox's
// cluster, left running by a test that does not deprovision) and waits
// until it is gone.
func stopPidFile(path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || syscall.Kill(pid, syscall.SIGTERM) != nil {
		return
	}
	for i := 0; i < 300 && syscall.Kill(pid, 0) == nil; i++ {
		time.Sleep(100 * time.Millisecond)
	}
}

// runnerPath is the PATH runners get, binDir first, and where they find
// the kube binaries.
func runnerPath() string {
	return "PATH=" + binDir + string(os.PathListSeparator) + os.Getenv("PATH")
}

// startBuildRunner launches the org's build runner.
func (s *stack) startBuildRunner() *process {
	s.t.Helper()
	return s.launchRunner("OUTPOST_TOKEN=" + s.buildTok)
}

func (s *stack) startWorker() {
	w := worker.New(worker.Config{Client: s.client, Store: s.store, TaskQueue: s.queue,
		Operations: activities.OperationConfig{GatewayURL: s.publicGateway, RunnerTimeout: s.runnerTimeout, OnlineWindow: 10 * time.Second,
			RegistryAddress: s.publicRegistry, RegistryPlainHTTP: true}})
	if err := w.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.worker = w
	s.t.Cleanup(w.Stop)
	if s.sweeping == nil { // one sweeper, however often the worker starts
		ctx, cancel := context.WithCancel(context.Background())
		sw := &worker.Sweeper{Client: s.client, Store: s.store, Every: time.Second, Grace: 5 * time.Second}
		s.sweeping = make(chan struct{})
		go func() { sw.Run(ctx); close(s.sweeping) }()
		s.t.Cleanup(func() { cancel(); <-s.sweeping })
	}
}

// process is a real process of the test (a runner, or a control plane's).
type process struct {
	cmd  *exec.Cmd
	out  *testutil.LockedBuffer // its stdout and stderr
	done chan struct{}
}

// startRunner launches outpost-runner against the stack's gateway URL, as
// the install's runner.
func (s *stack) startRunner(env ...string) *process {
	s.t.Helper()
	return s.launchRunner(append([]string{"OUTPOST_TOKEN=" + s.runTok}, env...)...)
}

func (s *stack) launchRunner(env ...string) *process {
	s.t.Helper()
	return s.launchRunnerAt(s.gateway, env...)
}

// launchRunnerAt launches outpost-runner against the gateway at url.
func (s *stack) launchRunnerAt(url string, env ...string) *process {
	s.t.Helper()
	work := s.runnerWorkDir
	if work == "" {
		work = s.t.TempDir()
	}
	cmd := exec.Command(runnerBin, "run", "--gateway-url", url, "--work-dir", work, "--cancel-grace", "2s")
	// Debug commands are off unless the customer allows them: the tests' runners allow them (a test
	// may say otherwise in env, whose entries come last and win).
	cmd.Env = append([]string{runnerPath(), "OUTPOST_KUBE_ASSETS=" + kubeAssets, "OUTPOST_ALLOW_DEBUG_COMMANDS=true"}, env...)
	return startProcess(s.t, cmd)
}

// startProcess starts cmd, which is stopped (SIGTERM, then SIGKILL after
// 10 s) when the test ends; its output is logged if the test failed.
func startProcess(t testing.TB, cmd *exec.Cmd) *process {
	t.Helper()
	out := &testutil.LockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, out: out, done: make(chan struct{})}
	go func() { cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
		if t.Failed() {
			t.Logf("%s %d output:\n%s", filepath.Base(cmd.Path), cmd.Process.Pid, out.String())
		}
	})
	return p
}

func (p *process) kill() {
	p.cmd.Process.Kill()
	<-p.done
}

// restart kills the process with sig, waits for its end and starts it
// again: the same command, arguments and environment.
func (p *process) restart(t testing.TB, sig syscall.Signal) *process {
	t.Helper()
	p.cmd.Process.Signal(sig)
	<-p.done
	cmd := exec.Command(p.cmd.Path, p.cmd.Args[1:]...)
	cmd.Env = p.cmd.Env
	return startProcess(t, cmd)
}

// get GETs path into out; an answer other than 200 fails the test.
func (s *stack) get(path string, out any) {
	s.t.Helper()
	if code := s.do("GET", path, nil, out); code != http.StatusOK {
		s.t.Fatalf("GET %s: %d", path, code)
	}
}

// getList GETs path, a list the API answers as {"<key>": [...]}.
func getList[T any](s *stack, path, key string) []T {
	s.t.Helper()
	var answer map[string][]T
	s.get(path, &answer)
	return answer[key]
}

// do calls the API with the org's token and decodes a JSON answer into out.
func (s *stack) do(method, path string, body any, out any) int {
	s.t.Helper()
	return apiCall(s.t, s.apiURL, s.token, method, path, body, out)
}

// apiCall calls the API at base with token and decodes a JSON answer into
// out; it returns the status code.
func apiCall(tb testing.TB, base, token, method, path string, body any, out any) int {
	tb.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, base+path, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			tb.Fatalf("%s %s: decode %q: %v", method, path, raw, err)
		}
	}
	return resp.StatusCode
}

// command is the API's view of a debug command.
type command struct {
	ID         string     `json:"id"`
	WorkflowID string     `json:"workflow_id"`
	JobID      string     `json:"job_id"`
	Status     status.Job `json:"status"`
	ExitCode   *int       `json:"exit_code"`
	Output     string     `json:"output"`
	Error      string     `json:"error"`
}

// runCommand starts a debug command through the API.
func (s *stack) runCommand(args ...string) command {
	s.t.Helper()
	var c command
	code := s.do("POST", "/v1/installs/"+s.install.ID+"/commands", map[string]any{"command": args, "timeout_seconds": 120}, &c)
	if code != http.StatusAccepted {
		s.t.Fatalf("POST commands: %d %+v", code, c)
	}
	return c
}

// waitCommand waits (through the API's ?wait) until the command finished.
func (s *stack) waitCommand(id string, within time.Duration) command {
	s.t.Helper()
	deadline := time.Now().Add(within)
	for {
		var c command
		s.do("GET", "/v1/installs/"+s.install.ID+"/commands/"+id+"?wait=10", nil, &c)
		if status.JobTerminal(c.Status) {
			return c
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("command %s still %s after %s", id, c.Status, within)
		}
	}
}

// logChunk is the API's view of a log chunk.
type logChunk struct {
	Attempt int       `json:"attempt"`
	Seq     int64     `json:"seq"`
	Stream  string    `json:"stream"`
	Data    string    `json:"data"`
	Time    time.Time `json:"time"`
}

func (s *stack) logs(jobID string) []logChunk {
	s.t.Helper()
	var all []logChunk
	after := ""
	for {
		var page struct {
			Chunks     []logChunk `json:"chunks"`
			NextCursor string     `json:"next_cursor"`
		}
		path := "/v1/jobs/" + jobID + "/logs"
		if after != "" {
			path += "?after=" + after
		}
		s.get(path, &page)
		all = append(all, page.Chunks...)
		if len(page.Chunks) == 0 || page.NextCursor == "" || page.NextCursor == after {
			return all
		}
		after = page.NextCursor
	}
}

// waitFor polls cond (reading through the API or store) until it holds.
func waitFor(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitRunnerOnline waits until the API shows the install's runner online
// (it has polled the gateway at least once).
func (s *stack) waitRunnerOnline(installID string) {
	s.t.Helper()
	type runner struct {
		InstallID *string `json:"install_id"`
		Status    string  `json:"status"`
	}
	waitFor(s.t, time.Minute, "install "+installID+"'s runner online", func() bool {
		var list struct{ Runners []runner }
		s.do("GET", "/v1/runners", nil, &list)
		for _, r := range list.Runners {
			if r.InstallID != nil && *r.InstallID == installID && r.Status == "online" {
				return true
			}
		}
		return false
	})
}

// commandJobID waits until the command has a job.
func (s *stack) commandJobID(id string) string {
	var jobID string
	waitFor(s.t, 30*time.Second, "the command's job", func() bool {
		var c command
		s.do("GET", "/v1/installs/"+s.install.ID+"/commands/"+id, nil, &c)
		jobID = c.JobID
		return jobID != ""
	})
	return jobID
}

// logsContain reports whether the job's logs contain text.
func (s *stack) logsContain(jobID, text string) bool {
	var b strings.Builder
	for _, c := range s.logs(jobID) {
		b.WriteString(c.Data)
	}
	return strings.Contains(b.String(), text)
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
