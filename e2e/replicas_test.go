package e2e

import (
	"context"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/seal"
	"github.com/outpost-dev/outpost/store/storetest"
)

// The control plane as replicas: a Temporal server of its own (`outpost
// temporal`), two `outpost api` and two `outpost worker` processes on one
// PostgreSQL database, runners and workers reaching the gateways and the
// vendor registries (one shared directory) through a proxy that spreads
// connections over them, as a load balancer does. Three installs of the
// example app provision at once, started through both APIs; one API and
// one worker are SIGKILLed while jobs run. Every operation succeeds, every
// job ran once, and the runners finished their jobs on the surviving API.
func TestReplicasSurviveKills(t *testing.T) {
	rp := startReplicas(t, 2, 2)
	s := rp.demoApp(t)

	installs := make([]string, 3)
	ops := make([]string, 3)
	for i := range installs {
		s.apiURL = rp.apis[i%2]
		installs[i], _ = s.newInstall("cust-"+string(rune('a'+i)), map[string]any{"name": "db_password", "value": "pw", "sensitive": true})
	}
	started := time.Now()
	for i, inst := range installs {
		s.apiURL = rp.apis[i%2]
		ops[i] = s.startOp(inst, "/provision", nil).ID
	}
	s.waitJobsRunning(installs)
	rp.apiProcs[0].kill()
	rp.workers[0].kill()
	killed := time.Now()
	t.Logf("killed API #1 and worker #1 while jobs ran, %s after the provisions started", killed.Sub(started).Round(time.Millisecond))

	s.apiURL = rp.apis[1]
	for i, inst := range installs {
		op := s.waitOp(inst, ops[i], 4*time.Minute)
		if op.Status != status.OpSucceeded {
			t.Fatalf("provision of %s: %s %q %+v", inst, op.Status, op.Error, op.Steps)
		}
		s.checkJobsRanOnce(inst, op, status.SandboxStep, "network", "database", "cache", "api", "cluster", "web")
		s.checkFinishedAfter(inst, killed)
	}
	t.Logf("the provisions ended %s after the kills", time.Since(killed).Round(time.Millisecond))
	s.checkBuiltOnce(installs[0])
}

// demoApp is a stack on the replicas, through the first API, with the
// example app synced (and so its build runner started).
func (rp *replicas) demoApp(t testing.TB) *stack { return rp.app(t, exampleDir) }

// app is a stack on the replicas, through the first API, with the app in
// dir synced (and so its build runner started).
func (rp *replicas) app(t testing.TB, dir string) *stack {
	s := &stack{t: t, apiURL: rp.apis[0], token: rp.token, gateway: rp.runnerGateway, store: rp.store}
	var app struct {
		ID    string `json:"id"`
		OrgID string `json:"org_id"`
	}
	if code := s.do("POST", "/v1/apps", map[string]any{"name": "demo"}, &app); code != http.StatusCreated {
		t.Fatalf("create app: %d", code)
	}
	s.install.AppID, s.orgID = app.ID, app.OrgID
	s.buildTok = rp.buildRunnerToken(s)
	s.syncConfig(dir)
	return s
}

// replicas is the control plane as processes: the URLs of its APIs, the
// proxies in front of its gateways and registries, and a store of the
// test's own on its database, to read what the processes wrote.
type replicas struct {
	apis     []string
	apiProcs []*process
	workers  []*process
	temporal *process
	gateway  *spreadProxy
	registry *spreadProxy
	// runnerGateway is the gateway's URL as runners and jobs reach it.
	runnerGateway string
	token         string // the org's API token
	store         *store.Store
	// metrics are the /metrics URLs of the APIs, then the workers
	// (replicaOptions.metrics).
	metrics []string
}

// replicaOptions shape the topology beyond its numbers of APIs and workers.
type replicaOptions struct {
	apis, workers int
	// databaseURL is the control plane's database (one on a PostgreSQL
	// server of the test's own, which it restarts); default a fresh one on
	// the shared server.
	databaseURL string
	// runnersVia, when set, puts something between the runners (and the
	// state backend of their jobs) and the gateways' proxy: given the
	// proxy's address, it returns the address runners are given.
	runnersVia func(addr string) string
	// metrics gives every API and worker a -metrics-listen address
	// (replicas.metrics).
	metrics bool
}

// startReplicas builds outpost and starts the Temporal server, migrates a
// fresh database, creates an org, and starts the APIs and the workers.
func startReplicas(t testing.TB, apis, workers int) *replicas {
	return startReplicasWith(t, replicaOptions{apis: apis, workers: workers})
}

func startReplicasWith(t testing.TB, o replicaOptions) *replicas {
	apis, workers := o.apis, o.workers
	bin := filepath.Join(testutil.Build(t, "../cmd/outpost"), "outpost")
	addrs := freeAddrs(t, 1+3*apis)
	temporalAddr, gateways, registries, apiAddrs := addrs[0], addrs[1:1+apis], addrs[1+apis:1+2*apis], addrs[1+2*apis:]
	_, port, _ := net.SplitHostPort(temporalAddr)
	temporal := startProcess(t, exec.Command(bin, "temporal", "-data-dir", t.TempDir(), "-temporal-port", port, "-temporal-ui-port", "-1"))
	db := o.databaseURL
	if db == "" {
		db = storetest.NewPostgresDatabase(t)
	}
	kekFile := filepath.Join(t.TempDir(), "kek")
	kek, _, err := seal.LoadOrCreateLocalKey(kekFile)
	if err != nil {
		t.Fatal(err)
	}
	common := []string{"-database-url", db, "-temporal-address", temporalAddr, "-task-queue", "replicas", "-kek-file", kekFile}
	runOutpost(t, bin, append([]string{"migrate"}, common...)...)
	rp := &replicas{token: strings.TrimSpace(runOutpost(t, bin, append(append([]string{"org", "create"}, common...), "acme")...)), temporal: temporal}

	rp.gateway, rp.registry = newSpreadProxy(t, gateways...), newSpreadProxy(t, registries...)
	rp.runnerGateway = "http://" + rp.gateway.addr()
	if o.runnersVia != nil {
		rp.runnerGateway = "http://" + o.runnersVia(rp.gateway.addr())
	}
	waitOutput(t, temporal, "temporal ready")
	data := t.TempDir() // one for both APIs: the vendor registry's blobs
	metricsArgs := func() []string {
		if !o.metrics {
			return nil
		}
		addr := freeAddrs(t, 1)[0]
		rp.metrics = append(rp.metrics, "http://"+addr+"/metrics")
		return []string{"-metrics-listen", addr}
	}
	for i := range apis {
		p := startProcess(t, exec.Command(bin, append(append([]string{"api", "-api-listen", apiAddrs[i], "-gateway-listen", gateways[i],
			"-registry-listen", registries[i], "-data-dir", data, "-claim-wait", "2s", "-job-heartbeat", "500ms",
			"-lease", "15s", "-runner-heartbeat", "2s"}, common...), metricsArgs()...)...))
		rp.apis, rp.apiProcs = append(rp.apis, "http://"+apiAddrs[i]), append(rp.apiProcs, p)
	}
	for range workers {
		w := startProcess(t, exec.Command(bin, append(append([]string{"worker", "-gateway-url", rp.runnerGateway,
			"-registry-url", "http://" + rp.registry.addr()}, common...), metricsArgs()...)...))
		rp.workers = append(rp.workers, w)
	}
	for _, p := range rp.apiProcs {
		waitOutput(t, p, "server=gateway")
	}
	for _, w := range rp.workers {
		waitOutput(t, w, "worker started")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if rp.store, err = store.Open(ctx, store.Config{DatabaseURL: db, Keys: &seal.Keyring{Current: kek}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rp.store.Close() })
	return rp
}

// runOutpost runs an outpost command to its end and returns its standard
// output.
func runOutpost(t testing.TB, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("outpost %s: %v\n%s", args[0], err, stderr.String())
	}
	return string(out)
}

// buildRunnerToken is a registration token of the org's build runner.
func (rp *replicas) buildRunnerToken(s *stack) string {
	var list struct {
		Runners []struct{ ID, Kind string }
	}
	s.do("GET", "/v1/runners", nil, &list)
	for _, r := range list.Runners {
		if r.Kind == store.RunnerKindBuild {
			var tok struct {
				RegistrationToken string `json:"registration_token"`
			}
			if code := s.do("POST", "/v1/runners/"+r.ID+"/registration-token", nil, &tok); code != http.StatusOK {
				s.t.Fatalf("rotate the build runner's registration token: %d", code)
			}
			return tok.RegistrationToken
		}
	}
	s.t.Fatalf("no build runner among %+v", list.Runners)
	return ""
}

// waitJobsRunning waits until every install has a job that succeeded and
// one that runs: well into its provision.
func (s *stack) waitJobsRunning(installs []string) {
	waitFor(s.t, 3*time.Minute, "a job done and one running in every install", func() bool {
		for _, inst := range installs {
			var done, running bool
			for _, j := range s.installJobs(inst) {
				done = done || j.Status == status.JobSucceeded
				running = running || j.Status == status.JobRunning
			}
			if !done || !running {
				return false
			}
		}
		return true
	})
}

// checkFinishedAfter checks a job of the install finished after t: its
// runner completed it through the gateway that survived.
func (s *stack) checkFinishedAfter(inst string, t time.Time) {
	s.t.Helper()
	for _, j := range s.installJobs(inst) {
		if j.FinishedAt != nil && j.FinishedAt.After(t) {
			return
		}
	}
	s.t.Errorf("no job of %s finished after the kill: the test shows nothing", inst)
}

// waitOutput waits until the process has written text.
func waitOutput(t testing.TB, p *process, text string) {
	t.Helper()
	waitFor(t, time.Minute, filepath.Base(p.cmd.Path)+" to say "+text, func() bool {
		select {
		case <-p.done:
			t.Fatalf("%s exited:\n%s", filepath.Base(p.cmd.Path), p.out.String())
		default:
		}
		return strings.Contains(p.out.String(), text)
	})
}

// freeAddrs are n loopback addresses with distinct ports, free now.
func freeAddrs(t testing.TB, n int) []string {
	t.Helper()
	addrs := make([]string, n)
	for i := range addrs {
		addrs[i] = testutil.FreeAddr(t) // never the same twice in one binary
	}
	return addrs
}
