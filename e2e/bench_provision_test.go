package e2e

// BenchmarkProvisionOverhead measures Outpost's orchestration overhead on a
// provision: an app of N components made only of terraform's built-in
// terraform_data resources (no provider, so it works offline), provisioned
// through the whole stack — API, Temporal workflow and activities, PostgreSQL
// store, gateway and a real outpost-runner process running terraform — and,
// in the same benchmark on the same machine, the same modules applied one
// after the other by a plain shell script with a local backend.
//
//	go test ./e2e -run '^$' -bench BenchmarkProvisionOverhead -benchtime 1x -timeout 20m
//
// OUTPOST_BENCH_INIT_CACHE=false starts the runners with
// --terraform-init-cache=false: every job then runs terraform init, as the
// scripts do, instead of reusing the runner's init of the same module.
//
// docs/BENCHMARKS.md ("Provisioning overhead") holds the figures and what
// they mean.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	history "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"

	"github.com/outpost-dev/outpost/activities"
	"github.com/outpost-dev/outpost/api"
	"github.com/outpost-dev/outpost/api/gateway"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/internal/attemptcred"
	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/runner/plugins/terraform"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
	"github.com/outpost-dev/outpost/worker"
)

// Defaults; OUTPOST_BENCH_COMPONENTS and OUTPOST_BENCH_REPS override them.
const (
	// provBenchComponents is N, the number of components besides the sandbox.
	provBenchComponents = 8
	// provBenchReps is how many timed repetitions each shape gets (after one
	// untimed warm-up of each contender); medians are reported.
	provBenchReps = 5
)

// BenchmarkProvisionOverhead provisions an N-component app in two shapes:
//
//   - chain: c1 → c2 → … → cN, each component reading the previous one's
//     output through a template (c1 reads the sandbox's);
//   - fanout: N components that each read the sandbox's output and depend on
//     nothing else, so the runner may run up to --concurrency (4) jobs at once.
//
// Each repetition times, in rotating order: an Outpost provision on a fresh
// install with its own runner (from POST …/provision to the API answering
// that the operation finished), and two scripts run by /bin/sh in fresh
// directories with the same terraform binary as the runner: "apply"
// (terraform init + apply -auto-approve per module: what the issue names,
// and exactly the terraform commands Outpost's plan_apply job runs) and
// "plan+apply" (init + plan -out + apply of the saved plan: what a script
// that keeps its plans runs). Medians are reported, with where Outpost's time
// went: job timestamps from the store, and the times the runner stamped on
// each job's log lines.
func BenchmarkProvisionOverhead(b *testing.B) {
	tf, err := terraform.Find("", os.Getenv("PATH"), "..")
	if err != nil {
		b.Skip(err)
	}
	n, reps := provBenchEnv(b, "OUTPOST_BENCH_COMPONENTS", provBenchComponents), provBenchEnv(b, "OUTPOST_BENCH_REPS", provBenchReps)
	for _, shape := range []string{"chain", "fanout"} {
		b.Run(fmt.Sprintf("%s/n=%d", shape, n), func(b *testing.B) {
			benchProvisionShape(b, tf, shape, n, reps)
		})
	}
}

// Script variants.
const (
	provScriptApply     = iota // init + apply -auto-approve: what a plan_apply job runs
	provScriptPlanApply        // init + plan -out + apply of the saved plan: a script keeping its plans
	provNumScripts
)

var provScriptNames = [provNumScripts]string{"script apply", "script plan+apply"}
var provScriptMetric = [provNumScripts]string{"script-apply", "script-plan-apply"}

func benchProvisionShape(b *testing.B, tf, shape string, n, reps int) {
	app := filepath.Join(b.TempDir(), "app")
	writeProvBenchApp(b, app, shape, n)
	s := newProvBench(b, tf)
	s.sync(app)
	sc := newProvBenchScript(b, tf, app, shape, n)

	// Warm-up, untimed: the first workflow run, the first terraform runs.
	s.provision(shape, n)
	for v := range provNumScripts {
		sc.run(v)
	}

	var outpost, outpostCPU, cpCPU []time.Duration
	var script, scriptCPU [provNumScripts][]time.Duration
	var runs []provBenchRun
	for rep := range reps {
		// Rotate the order so that a slow spell of the (shared) machine does
		// not always hit the same contender.
		for k := range provNumScripts + 1 {
			switch v := (rep + k) % (provNumScripts + 1); v {
			case provNumScripts:
				r := s.provision(shape, n)
				runs = append(runs, r)
				outpost = append(outpost, r.total)
				outpostCPU = append(outpostCPU, r.runnerCPU)
				cpCPU = append(cpCPU, r.controlPlaneCPU)
			default:
				d, cpu := sc.run(v)
				script[v], scriptCPU[v] = append(script[v], d), append(scriptCPU[v], cpu)
			}
		}
	}

	o := provBenchMedian(outpost)
	agg := aggregateProvBench(runs)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(o.Seconds(), "outpost-s")
	b.ReportMetric(provBenchMedian(outpostCPU).Seconds(), "outpost-runner-cpu-s")
	b.ReportMetric(provBenchMedian(cpCPU).Seconds(), "outpost-cp-cpu-s")
	b.ReportMetric(agg.share.controlPlane.Seconds(), "outpost-cp-alone-s")
	for kind := range agg.count {
		b.ReportMetric(agg.jobMean(kind)*1000, kind+"-job-ms")
	}
	line := fmt.Sprintf("%s, N=%d, medians of %d: outpost %.2fs", shape, n, reps, o.Seconds())
	runsLine := "runs (s): outpost " + provBenchSeconds(outpost)
	cpuLine := fmt.Sprintf("CPU (s, medians): outpost's runner and its jobs %.2f + control plane (this process; PostgreSQL not counted) %.2f",
		provBenchMedian(outpostCPU).Seconds(), provBenchMedian(cpCPU).Seconds())
	for v := range provNumScripts {
		d, cpu := provBenchMedian(script[v]), provBenchMedian(scriptCPU[v])
		b.ReportMetric(d.Seconds(), provScriptMetric[v]+"-s")
		b.ReportMetric(cpu.Seconds(), provScriptMetric[v]+"-cpu-s")
		b.ReportMetric(o.Seconds()/d.Seconds(), "x-"+provScriptMetric[v])
		line += fmt.Sprintf("; %s %.2fs (outpost %.2f×)", provScriptNames[v], d.Seconds(), o.Seconds()/d.Seconds())
		runsLine += "; " + provScriptNames[v] + " " + provBenchSeconds(script[v])
		cpuLine += fmt.Sprintf("; %s %.2f", provScriptNames[v], cpu.Seconds())
	}
	b.Logf("%s", line)
	b.Logf("%s", runsLine)
	b.Logf("%s", cpuLine)
	b.Logf("%s", agg.report())
	// A stall: Temporal history quiet for over a second (on this workload
	// no step takes that long).
	for i, r := range runs {
		if r.stall > time.Second {
			b.Logf("stall in provision %d (%.2fs): %.2fs between history events %s", i+1, r.total.Seconds(), r.stall.Seconds(), r.stallAt)
		}
	}
}

// ---- the app config --------------------------------------------------------

// writeProvBenchApp writes an app config of n components: a sandbox module
// and one component module shared by every component.
func writeProvBenchApp(tb testing.TB, dir, shape string, n int) {
	tb.Helper()
	files := map[string]string{
		"outpost.toml": "# Generated by BenchmarkProvisionOverhead.\n[app]\nname = \"demo\"\n\n[sandbox]\nsource = \"sandbox\"\n\n" +
			"[sandbox.variables]\ninstall_id = \"{{ .install.id }}\"\n",
		"sandbox/main.tf": `resource "terraform_data" "sandbox" {
  input = "sandbox"
}

output "id" {
  value = terraform_data.sandbox.id
}
`,
		"modules/component/main.tf": `variable "name" {
  type = string
}

variable "prev" {
  type = string
}

resource "terraform_data" "this" {
  input = "${var.prev}/${var.name}"
}

output "value" {
  value = terraform_data.this.output
}
`,
	}
	for i := 1; i <= n; i++ {
		prev := "{{ .sandbox.outputs.id }}"
		if shape == "chain" && i > 1 {
			prev = fmt.Sprintf("{{ .components.c%d.outputs.value }}", i-1)
		}
		files[fmt.Sprintf("components/c%d.toml", i)] = fmt.Sprintf(
			"name = \"c%d\"\ntype = \"terraform_module\"\nsource = \"modules/component\"\n\n[variables]\nname = \"c%d\"\nprev = %q\n", i, i, prev)
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// wantLast is the value the last component outputs, given the sandbox's ID.
func provBenchWantLast(shape string, n int, sandboxID string) string {
	if shape != "chain" {
		return fmt.Sprintf("%s/c%d", sandboxID, n)
	}
	var b strings.Builder
	b.WriteString(sandboxID)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "/c%d", i)
	}
	return b.String()
}

// ---- the plain script ------------------------------------------------------

type provBenchScript struct {
	tb    testing.TB
	tf    string
	app   string
	shape string
	n     int
	env   []string
	runs  int
}

func newProvBenchScript(tb testing.TB, tf, app, shape string, n int) *provBenchScript {
	home := tb.TempDir()
	rc := filepath.Join(home, "terraformrc")
	if err := os.WriteFile(rc, nil, 0o600); err != nil {
		tb.Fatal(err)
	}
	return &provBenchScript{tb: tb, tf: tf, app: app, shape: shape, n: n,
		env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "CHECKPOINT_DISABLE=1", "TF_CLI_CONFIG_FILE=" + rc}}
}

// script is the shell script of a variant: the sandbox, then each
// component, one after the other; each output a later module needs is read
// with terraform output.
func (sc *provBenchScript) script(variant int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/sh\nset -eu\ntf=%q\nroot=\"$1\"\nlog=\"$root/log\"\n", sc.tf)
	const q = "-input=false -no-color"
	// deploy leaves the module's state in the current directory.
	deploy := func(dir, vars string) {
		switch variant {
		case provScriptApply:
			fmt.Fprintf(&b, "cd \"$root/%s\"\n\"$tf\" init %s >>\"$log\"\n", dir, q)
			fmt.Fprintf(&b, "\"$tf\" apply -auto-approve %s%s >>\"$log\"\n", q, vars)
		case provScriptPlanApply:
			fmt.Fprintf(&b, "cd \"$root/%s\"\n\"$tf\" init %s >>\"$log\"\n", dir, q)
			fmt.Fprintf(&b, "\"$tf\" plan %s -out=tfplan%s >>\"$log\"\n\"$tf\" apply %s tfplan >>\"$log\"\n", q, vars, q)
		}
	}
	// readOutput reads one output of the module just deployed into a shell
	// variable (Outpost reads outputs from the stored state, without
	// terraform; the scripts need terraform output to chain the modules).
	readOutput := func(shellVar, output string) {
		fmt.Fprintf(&b, "%s=$(\"$tf\" output -raw %s)\n", shellVar, output)
	}
	deploy("sandbox", "")
	readOutput("sandbox", "id")
	b.WriteString("prev=\"$sandbox\"\n")
	for i := 1; i <= sc.n; i++ {
		deploy(fmt.Sprintf("c%d", i), fmt.Sprintf(" -var name=c%d -var \"prev=$prev\"", i))
		switch {
		case sc.shape == "chain" || i == sc.n:
			readOutput("prev", "value")
		}
	}
	b.WriteString("printf '%s %s' \"$sandbox\" \"$prev\"\n")
	return b.String()
}

// run prepares fresh directories (untimed), then times the script; it
// returns the wall time and the CPU time of the script and its children.
func (sc *provBenchScript) run(variant int) (time.Duration, time.Duration) {
	tb := sc.tb
	tb.Helper()
	sc.runs++
	root := filepath.Join(tb.TempDir(), fmt.Sprintf("script-%d", sc.runs))
	modules := map[string]string{"sandbox": filepath.Join(sc.app, "sandbox")}
	for i := 1; i <= sc.n; i++ {
		modules[fmt.Sprintf("c%d", i)] = filepath.Join(sc.app, "modules", "component")
	}
	for dir, src := range modules {
		copyDir(tb, src, filepath.Join(root, dir))
	}
	path := filepath.Join(root, "provision.sh")
	if err := os.WriteFile(path, []byte(sc.script(variant)), 0o755); err != nil {
		tb.Fatal(err)
	}
	var out, stderr bytes.Buffer
	cmd := exec.Command("/bin/sh", path, root)
	cmd.Env, cmd.Stdout, cmd.Stderr = sc.env, &out, &stderr
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(root, "log"))
		tb.Fatalf("%s: %v\n%s\n%s", provScriptNames[variant], err, stderr.String(), log)
	}
	sandbox, last, _ := strings.Cut(out.String(), " ")
	if want := provBenchWantLast(sc.shape, sc.n, sandbox); last != want {
		tb.Fatalf("%s: last output %q, want %q", provScriptNames[variant], last, want)
	}
	return d, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// ---- the Outpost stack -----------------------------------------------------

// provBench is a control plane set up as `outpost api` and `outpost worker`
// set it up in production (default gateway intervals and worker settings),
// on real parts: a fresh PostgreSQL database, the gateway and API over HTTP,
// a Temporal worker against the in-process Temporal server of TestMain.
type provBench struct {
	tb       testing.TB
	tf       string
	store    *store.Store
	temporal client.Client
	api      *httptest.Server
	gw       *httptest.Server
	token    string
	orgID    string
	appID    string
	installs int
	buildTok string // the org's build runner's
}

func newProvBench(tb testing.TB, tf string) *provBench {
	tb.Helper()
	log := slog.New(slog.NewTextHandler(testWriter{tb}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s := storetest.Open(tb, store.Postgres)
	ctx, g := startGateway(tb, gateway.Config{Store: s, Logger: log})
	tc := dialTemporal(tb, log)
	queue := "bench-" + strings.NewReplacer("/", "-", "=", "-").Replace(tb.Name())
	a := api.New(api.Config{Store: s, Ops: &worker.Operations{Client: tc, TaskQueue: queue}, Logger: log})
	p := &provBench{tb: tb, tf: tf, store: s, temporal: tc, api: httptest.NewServer(a.Handler()), gw: httptest.NewServer(g.Handler())}
	tb.Cleanup(p.api.Close)
	tb.Cleanup(p.gw.Close)
	vendor, err := registry.Start(ctx, registry.Config{Dir: tb.TempDir(), Auth: registry.Tokens{Keys: attemptcred.RegistryKeys(s), Leases: s}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { vendor.Close() })
	w := worker.New(worker.Config{Client: tc, Store: s, TaskQueue: queue, Logger: log,
		Operations: activities.OperationConfig{GatewayURL: p.gw.URL, RegistryAddress: vendor.Addr(), RegistryPlainHTTP: true}})
	if err := w.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(w.Stop)

	org, tok, err := s.CreateOrg(ctx, "acme")
	if err != nil {
		tb.Fatal(err)
	}
	app, err := s.CreateApp(ctx, org.ID, "demo", "")
	if err != nil {
		tb.Fatal(err)
	}
	p.token, p.orgID, p.appID = tok, org.ID, app.ID
	build, err := s.EnsureBuildRunner(ctx, org.ID)
	if err != nil {
		tb.Fatal(err)
	}
	if p.buildTok, err = s.IssueRunnerToken(ctx, org.ID, build.ID); err != nil {
		tb.Fatal(err)
	}
	return p
}

func (p *provBench) do(method, path string, body, out any) int {
	p.tb.Helper()
	return apiCall(p.tb, p.api.URL, p.token, method, path, body, out)
}

// sync syncs the app config and waits, untimed, until its builds are done:
// a provision of an unchanged app does not build again.
func (p *provBench) sync(dir string) {
	p.tb.Helper()
	p.startRunner(p.buildTok)
	syncConfig(p.tb, p.api.URL, p.token, p.appID, dir)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		builds, err := p.store.ListBuilds(context.Background(), p.orgID, p.appID, store.BuildFilter{})
		if err != nil {
			p.tb.Fatal(err)
		}
		done := len(builds) > 0
		for _, b := range builds {
			if b.Status == status.BuildFailed {
				p.tb.Fatalf("build %s of %s failed: %s", b.ID, b.Component, b.Error)
			}
			done = done && b.Status == status.BuildSucceeded
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			p.tb.Fatalf("builds not done after 2m: %+v", builds)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startRunner starts a real outpost-runner for an install, with the default
// concurrency, and returns a function that stops it (SIGTERM) and returns
// the CPU time the runner and its jobs (job processes, terraform) used.
func (p *provBench) startRunner(regToken string) func() time.Duration {
	p.tb.Helper()
	cmd := exec.Command(runnerBin, "run", "--gateway-url", p.gw.URL, "--work-dir", p.tb.TempDir(), "--terraform", p.tf)
	if v := os.Getenv("OUTPOST_BENCH_INIT_CACHE"); v != "" {
		// "false": every job runs terraform init, as the scripts do.
		cmd.Args = append(cmd.Args, "--terraform-init-cache="+v)
	}
	cmd.Env = []string{runnerPath(), "OUTPOST_KUBE_ASSETS=" + kubeAssets, "OUTPOST_TOKEN=" + regToken}
	out := &testutil.LockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		p.tb.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	stopped := false
	stop := func() time.Duration {
		if stopped {
			return 0
		}
		stopped = true
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if p.tb.Failed() {
			p.tb.Logf("runner %d output:\n%s", cmd.Process.Pid, out.String())
		}
		return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	p.tb.Cleanup(func() { stop() })
	return stop
}

// provBenchOp is the API's view of an operation.
type provBenchOp struct {
	ID         string     `json:"id"`
	Status     status.Op  `json:"status"`
	Error      string     `json:"error"`
	FinishedAt *time.Time `json:"finished_at"`
}

// provision creates an install with its own runner, waits until the runner
// is online (untimed), then times a provision from the POST to the moment
// the API answers that the operation finished, and reads where the time went.
func (p *provBench) provision(shape string, n int) provBenchRun {
	tb := p.tb
	tb.Helper()
	ctx := context.Background()
	p.installs++
	var created struct {
		ID     string `json:"id"`
		Runner struct {
			RegistrationToken string `json:"registration_token"`
		} `json:"runner"`
	}
	if code := p.do("POST", "/v1/installs", map[string]any{"app_id": p.appID, "name": fmt.Sprintf("bench-%d", p.installs)}, &created); code != http.StatusCreated {
		tb.Fatalf("create install: %d %+v", code, created)
	}
	inst := created.ID
	stopSandboxRegistry(tb, inst)
	stop := p.startRunner(created.Runner.RegistrationToken)
	defer stop()
	deadline := time.Now().Add(time.Minute)
	for {
		r, err := p.store.GetInstallRunner(ctx, p.orgID, inst)
		if err == nil && r.LastSeenAt != nil {
			break
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the runner of %s did not register within a minute", inst)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The runner's first claim is in flight, or about to be: let it park.
	time.Sleep(200 * time.Millisecond)

	cpu0 := provBenchSelfCPU(tb)
	start := time.Now()
	var op provBenchOp
	if code := p.do("POST", "/v1/installs/"+inst+"/provision", nil, &op); code != http.StatusAccepted {
		tb.Fatalf("POST provision: %d %+v", code, op)
	}
	for op.FinishedAt == nil {
		if time.Since(start) > 5*time.Minute {
			tb.Fatalf("provision %s still %s after 5 minutes", op.ID, op.Status)
		}
		if code := p.do("GET", fmt.Sprintf("/v1/installs/%s/operations/%s?wait=20", inst, op.ID), nil, &op); code != http.StatusOK {
			tb.Fatalf("GET operation: %d", code)
		}
	}
	end := time.Now()
	cpCPU := provBenchSelfCPU(tb) - cpu0
	runnerCPU := stop()
	if op.Status != status.OpSucceeded {
		tb.Fatalf("provision: %s %q", op.Status, op.Error)
	}

	// The data flowed through the templates as in the script.
	outs, err := p.store.ListOutputs(ctx, inst)
	if err != nil {
		tb.Fatal(err)
	}
	sandboxID, last := provBenchOutput(tb, outs, "sandbox", "id"), provBenchOutput(tb, outs, fmt.Sprintf("c%d", n), "value")
	if want := provBenchWantLast(shape, n, sandboxID); last != want {
		tb.Fatalf("last component's output %q, want %q", last, want)
	}
	r := p.breakdown(op.ID, start, end)
	r.runnerCPU, r.controlPlaneCPU = runnerCPU, cpCPU
	return r
}

func provBenchOutput(tb testing.TB, outs map[string]string, name, key string) string {
	tb.Helper()
	var o protocol.TerraformApplyOutputs
	if err := json.Unmarshal([]byte(outs[name]), &o); err != nil {
		tb.Fatalf("outputs of %s: %v", name, err)
	}
	var v string
	if err := json.Unmarshal(o.Outputs[key].Value, &v); err != nil {
		tb.Fatalf("output %s of %s: %v (%s)", key, name, err, o.Outputs[key].Value)
	}
	return v
}

// ---- where the time goes ---------------------------------------------------

// Phases of one job, from the store's timestamps and the times the runner
// stamped on the job's log lines:
//
//	queued  enqueued (created_at) → claimed (started_at)
//	prep    → the runner's "runner: starting job" line (claim answer, job directory)
//	spawn   → "outpost: terraform …" (job process started, module unpacked)
//	init    → "outpost: terraform initialised" (init ran, or the runner reused an earlier init)
//	wait    → "outpost: variables received", for a job queued early with
//	          deferred inputs (its dependencies were still running); else 0
//	sync    → "outpost: synced: …", when the job copied its build into the
//	          install's registry after its variables came (the registry came
//	          with them); else 0
//	op      → terraform's last line (of the plan, or of the apply)
//	post    → the runner's "runner: job succeeded" line (show -json when it outlasts the apply)
//	finish  → completed (finished_at): log shipping, completion
const (
	provPhaseQueued = iota
	provPhasePrep
	provPhaseSpawn
	provPhaseInit
	provPhaseWait
	provPhaseSync
	provPhaseOp
	provPhasePost
	provPhaseFinish
	provNumPhases
)

var provPhaseNames = [provNumPhases]string{"queued", "prep", "spawn", "init", "wait", "sync", "terraform", "post", "finish"}

type provBenchJob struct {
	step, kind      string // kind: sync, plan, apply, plan_apply or plan_apply-prestarted (deferred inputs)
	first, last     bool   // the step's first job; its last
	created         time.Time
	ready           time.Time // when it could do its work: created, or when its deferred inputs were given
	received        time.Time // a prestarted job: when its process had its variables
	arrived         time.Time // a prestarted job: when its runner had its inputs
	started, ended  time.Time
	phases          [provNumPhases]time.Duration
	phasesKnown     bool
	stepStartedAt   time.Time
	stepFinishedAt  time.Time
	beforeEnqueue   time.Duration // plan: step started → enqueued; apply: plan completed → enqueued
	afterCompletion time.Duration // apply: completed → step recorded finished
}

// provBenchRun is one timed provision.
type provBenchRun struct {
	total time.Duration
	// runnerCPU is the CPU time of the runner and its descendants, start to stop; controlPlaneCPU
	// this process's during the provision (API, gateway, worker, Temporal, client). Not PostgreSQL's.
	runnerCPU, controlPlaneCPU time.Duration
	jobs                       []provBenchJob
	share                      provBenchShare
	maxPar                     int
	// opStart: POST → the first job enqueued; opEnd: the last job completed
	// → the operation recorded finished in the store (FinishOperation);
	// opSeen: → the client's GET …?wait answered that it finished.
	opStart, opEnd, opSeen time.Duration
	// stall is the longest time between two events of the workflow's
	// history; stallAt names them.
	stall   time.Duration
	stallAt string
}

// provBenchShare splits a provision's wall time by what was going on: at
// least one job on the runner; jobs queued but none running; or neither —
// only the control plane (workflow tasks, activities, store) at work.
type provBenchShare struct {
	running, queuedOnly, controlPlane time.Duration
}

func (p *provBench) breakdown(opID string, start, end time.Time) provBenchRun {
	tb := p.tb
	ctx := context.Background()
	op, err := p.store.GetOperation(ctx, p.orgID, opID)
	if err != nil {
		tb.Fatal(err)
	}
	run := provBenchRun{total: end.Sub(start)}
	for _, st := range op.Steps {
		if st.PlanJobID == nil || st.ApplyJobID == nil {
			tb.Fatalf("step %s: plan job %v, apply job %v", st.Name, st.PlanJobID, st.ApplyJobID)
		}
		type stepJob struct {
			kind string
			id   *string
		}
		jobs := []stepJob{{"plan", st.PlanJobID}, {"apply", st.ApplyJobID}}
		if *st.PlanJobID == *st.ApplyJobID {
			jobs = []stepJob{{"plan_apply", st.PlanJobID}}
		}
		if st.SyncJobID != nil && *st.SyncJobID != *st.PlanJobID { // else the plan_apply job synced the build
			jobs = append([]stepJob{{"sync", st.SyncJobID}}, jobs...)
		}
		for i, j := range jobs {
			job, err := p.store.GetJob(ctx, p.orgID, *j.id)
			if err != nil {
				tb.Fatal(err)
			}
			if job.StartedAt == nil || job.FinishedAt == nil || job.Attempt != 1 {
				tb.Fatalf("job %s: started %v, finished %v, attempt %d", job.ID, job.StartedAt, job.FinishedAt, job.Attempt)
			}
			bj := provBenchJob{step: st.Name, kind: j.kind, created: job.CreatedAt, ready: job.CreatedAt, started: *job.StartedAt,
				ended: *job.FinishedAt, first: i == 0, last: i == len(jobs)-1}
			if job.InputsAt != nil {
				bj.kind, bj.ready = j.kind+"-prestarted", *job.InputsAt
			}
			if st.StartedAt != nil {
				bj.stepStartedAt = *st.StartedAt
			}
			if st.FinishedAt != nil {
				bj.stepFinishedAt = *st.FinishedAt
			}
			bj.phases[provPhaseQueued] = bj.started.Sub(bj.created)
			if j.kind != "sync" { // a sync job runs no terraform: no phase markers
				p.jobPhases(&bj, job.ID)
			}
			run.jobs = append(run.jobs, bj)
		}
	}
	// The workflow's gaps around a step's jobs (in order: a step's first
	// job, then its second if it has one).
	for i := range run.jobs {
		j := &run.jobs[i]
		if j.first {
			j.beforeEnqueue = j.created.Sub(j.stepStartedAt)
		} else {
			j.beforeEnqueue = j.created.Sub(run.jobs[i-1].ended)
		}
		if j.last {
			j.afterCompletion = j.stepFinishedAt.Sub(j.ended)
		}
	}
	first, last := run.jobs[0].created, run.jobs[0].ended
	for _, j := range run.jobs {
		first = provBenchMinTime(first, j.created)
		last = provBenchMaxTime(last, j.ended)
	}
	if op.FinishedAt == nil {
		tb.Fatalf("operation %s has no end in the store", opID)
	}
	run.opStart, run.opEnd, run.opSeen = first.Sub(start), op.FinishedAt.Sub(last), end.Sub(*op.FinishedAt)
	run.share, run.maxPar = provBenchShareOf(run.jobs, start, end)
	run.stall, run.stallAt = p.longestHistoryGap(op.WorkflowID)
	if path := os.Getenv("OUTPOST_BENCH_TIMELINE"); path != "" {
		writeProvBenchTimeline(tb, path, run, start)
	}
	return run
}

// writeProvBenchTimeline appends the provision's jobs to path, as ms from
// the POST: queued, claimed, ready (inputs given), completed, and the step
// recorded finished. For reading where one provision's time went.
func writeProvBenchTimeline(tb testing.TB, path string, run provBenchRun, start time.Time) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	ms := func(t time.Time) int64 { return t.Sub(start).Milliseconds() }
	fmt.Fprintf(f, "provision of %.0f ms\n", run.total.Seconds()*1000)
	for _, j := range run.jobs {
		fmt.Fprintf(f, "%-10s %-22s queued %5d claimed %5d ready %5d completed %5d step-done %5d\n",
			j.step, j.kind, ms(j.created), ms(j.started), ms(j.ready), ms(j.ended), ms(j.stepFinishedAt))
	}
}

// longestHistoryGap finds the longest time between two consecutive events
// of the workflow's Temporal history, and says between which. The wait for
// a job (an AwaitJob activity running until it completes) is not a gap.
func (p *provBench) longestHistoryGap(workflowID string) (time.Duration, string) {
	iter := p.temporal.GetWorkflowHistory(context.Background(), workflowID, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	activity := map[int64]string{} // scheduled event ID → activity type
	describe := func(ev *history.HistoryEvent) string {
		name := strings.TrimPrefix(ev.GetEventType().String(), "EVENT_TYPE_")
		var sched int64
		switch {
		case ev.GetActivityTaskScheduledEventAttributes() != nil:
			activity[ev.GetEventId()] = ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()
			sched = ev.GetEventId()
		case ev.GetActivityTaskStartedEventAttributes() != nil:
			sched = ev.GetActivityTaskStartedEventAttributes().GetScheduledEventId()
		case ev.GetActivityTaskCompletedEventAttributes() != nil:
			sched = ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()
		case ev.GetActivityTaskFailedEventAttributes() != nil:
			sched = ev.GetActivityTaskFailedEventAttributes().GetScheduledEventId()
		case ev.GetActivityTaskTimedOutEventAttributes() != nil:
			sched = ev.GetActivityTaskTimedOutEventAttributes().GetScheduledEventId()
		}
		if sched != 0 {
			name += "(" + activity[sched] + ")"
		}
		return fmt.Sprintf("%d %s", ev.GetEventId(), name)
	}
	var (
		longest     time.Duration
		where, prev string
		prevAt      time.Time
	)
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			p.tb.Fatal(err)
		}
		at, d := ev.GetEventTime().AsTime(), describe(ev)
		awaited := ev.GetActivityTaskCompletedEventAttributes() != nil && strings.HasSuffix(d, "(AwaitJob)")
		if !prevAt.IsZero() && !awaited && at.Sub(prevAt) > longest {
			longest, where = at.Sub(prevAt), prev+" → "+d
		}
		prev, prevAt = d, at
	}
	return longest, where
}

// jobPhases splits a job's run with the times of its log lines.
func (p *provBench) jobPhases(j *provBenchJob, jobID string) {
	chunks, err := p.store.ListLogs(context.Background(), jobID, store.LogCursor{}, 10000)
	if err != nil {
		p.tb.Fatal(err)
	}
	var tStart, tTF, tInit, tVars, tSynced, tOp, tDone time.Time
	for _, c := range chunks {
		switch {
		case strings.HasPrefix(c.Data, "runner: starting job"):
			tStart = c.Time
		case strings.HasPrefix(c.Data, "outpost: terraform initialised"):
			tInit = c.Time
		case strings.HasPrefix(c.Data, "outpost: terraform "):
			tTF = c.Time
		case strings.HasPrefix(c.Data, "outpost: variables received"):
			tVars, j.received = c.Time, c.Time
		case strings.HasPrefix(c.Data, "runner: the job's inputs arrived"):
			j.arrived = c.Time
		case strings.HasPrefix(c.Data, "outpost: synced: "):
			tSynced = c.Time
		case strings.HasPrefix(c.Data, "runner: job succeeded"):
			tDone = c.Time
		case !tInit.IsZero() && !strings.HasPrefix(c.Data, "outpost:") && !strings.HasPrefix(c.Data, "runner:"):
			tOp = c.Time
		}
	}
	if tStart.IsZero() || tTF.IsZero() || tInit.IsZero() || tOp.IsZero() || tDone.IsZero() {
		p.tb.Logf("job %s (%s %s): phase markers not found in %d log lines", jobID, j.step, j.kind, len(chunks))
		return
	}
	j.phases[provPhasePrep] = tStart.Sub(j.started)
	j.phases[provPhaseSpawn] = tTF.Sub(tStart)
	j.phases[provPhaseInit] = tInit.Sub(tTF)
	if tVars.IsZero() {
		tVars = tInit
	}
	j.phases[provPhaseWait] = tVars.Sub(tInit)
	if tSynced.Before(tVars) {
		tSynced = tVars // no sync, or one done while the job waited
	}
	j.phases[provPhaseSync] = tSynced.Sub(tVars)
	j.phases[provPhaseOp] = tOp.Sub(tSynced)
	j.phases[provPhasePost] = tDone.Sub(tOp)
	j.phases[provPhaseFinish] = j.ended.Sub(tDone)
	j.phasesKnown = true
}

// provBenchShareOf sweeps [start, end] and attributes each instant to running (a job
// claimed and not completed), queued only, or the control plane alone.
func provBenchShareOf(jobs []provBenchJob, start, end time.Time) (provBenchShare, int) {
	type ev struct {
		at          time.Time
		dQ, dR      int
		orderOnTies int
	}
	var evs []ev
	for _, j := range jobs {
		evs = append(evs, ev{at: j.created, dQ: 1}, ev{at: j.started, dQ: -1, dR: 1}, ev{at: j.ended, dR: -1, orderOnTies: -1})
	}
	slices.SortFunc(evs, func(a, b ev) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.orderOnTies - b.orderOnTies
	})
	var sh provBenchShare
	q, r, maxR := 0, 0, 0
	prev := start
	add := func(until time.Time) {
		d := until.Sub(prev)
		if d <= 0 {
			return
		}
		switch {
		case r > 0:
			sh.running += d
		case q > 0:
			sh.queuedOnly += d
		default:
			sh.controlPlane += d
		}
		prev = until
	}
	for _, e := range evs {
		add(e.at)
		q += e.dQ
		r += e.dR
		maxR = max(maxR, r)
	}
	add(end)
	return sh, maxR
}

// provBenchAgg sums up the timed provisions of one shape.
type provBenchAgg struct {
	runs, jobs, known int
	total             float64        // median s of the runs
	share             provBenchShare // each part: median of the runs
	maxPar            int
	phase             map[string][provNumPhases]float64 // mean s per job, by kind
	count             map[string]int                    // jobs with phase markers, by kind
	gap               map[string]float64                // mean s of the workflow's gaps, see report
	gapMax            map[string]float64
	gapN              map[string]int
}

func aggregateProvBench(runs []provBenchRun) provBenchAgg {
	med := func(f func(provBenchRun) time.Duration) time.Duration {
		ds := make([]time.Duration, len(runs))
		for i, r := range runs {
			ds[i] = f(r)
		}
		return provBenchMedian(ds)
	}
	a := provBenchAgg{runs: len(runs), phase: map[string][provNumPhases]float64{}, count: map[string]int{},
		gap: map[string]float64{}, gapN: map[string]int{}, gapMax: map[string]float64{}}
	addGap := func(k string, d time.Duration) {
		a.gap[k] += d.Seconds()
		a.gapN[k]++
		a.gapMax[k] = max(a.gapMax[k], d.Seconds())
	}
	a.total = med(func(r provBenchRun) time.Duration { return r.total }).Seconds()
	a.share.running = med(func(r provBenchRun) time.Duration { return r.share.running })
	a.share.queuedOnly = med(func(r provBenchRun) time.Duration { return r.share.queuedOnly })
	a.share.controlPlane = med(func(r provBenchRun) time.Duration { return r.share.controlPlane })
	for _, r := range runs {
		addGap("start", r.opStart)
		addGap("end", r.opEnd)
		addGap("seen", r.opSeen)
		a.maxPar = max(a.maxPar, r.maxPar)
		for _, j := range r.jobs {
			a.jobs++
			if j.phasesKnown {
				a.known++
				ph := a.phase[j.kind]
				for i := range provNumPhases {
					ph[i] += j.phases[i].Seconds()
				}
				a.phase[j.kind] = ph
				a.count[j.kind]++
			}
			if !j.first {
				addGap("apply", j.beforeEnqueue)
			}
			if j.last {
				addGap("record", j.afterCompletion)
			}
			// A component's job could work once the last step ended before it was (its
			// dependency's, in the chain); ready is when it was queued or given its inputs.
			if strings.HasPrefix(j.kind, "plan_apply") && j.step != status.SandboxStep {
				var dep time.Time
				for _, k := range r.jobs {
					if k.last && k.ended.Before(j.ready) && k.ended.After(dep) {
						dep = k.ended
					}
				}
				if !dep.IsZero() {
					addGap("handoff", j.ready.Sub(dep))
				}
				// For a prestarted job, the hand-off in parts.
				var depStep time.Time
				for _, k := range r.jobs {
					if k.last && k.ended.Equal(dep) {
						depStep = k.stepFinishedAt
					}
				}
				if !dep.IsZero() && !j.received.IsZero() && !depStep.IsZero() {
					addGap("handoff-record", depStep.Sub(dep))
					addGap("handoff-inputs", j.ready.Sub(depStep))
					if !j.arrived.IsZero() {
						addGap("handoff-runner", j.arrived.Sub(j.ready))
						addGap("handoff-deliver", j.received.Sub(j.arrived))
					}
				}
			}
		}
	}
	for k, ph := range a.phase {
		for i := range ph {
			ph[i] /= float64(a.count[k])
		}
		a.phase[k] = ph
	}
	for k := range a.gap {
		a.gap[k] /= float64(a.gapN[k])
	}
	return a
}

// jobMean is the mean time of a job of the kind, claim to completion (not
// counting its time in the queue, nor its wait for deferred inputs).
func (a provBenchAgg) jobMean(kind string) float64 {
	t := 0.0
	for i := provPhasePrep; i < provNumPhases; i++ {
		if i != provPhaseWait {
			t += a.phase[kind][i]
		}
	}
	return t
}

// report is at most 4 lines: a benchmark's log is cut after 10.
func (a provBenchAgg) report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "outpost, medians of %d provisions: wall %.2fs = a job running %.2fs + jobs queued, none running %.2fs + control plane alone %.2fs; at most %d jobs at once\n",
		a.runs, a.total, a.share.running.Seconds(), a.share.queuedOnly.Seconds(), a.share.controlPlane.Seconds(), a.maxPar)
	b.WriteString("control plane (ms, mean/max):")
	for _, g := range []struct{ key, what string }{
		{"start", "POST → first job enqueued"}, {"apply", "a step's job completed → its next job enqueued (after a sync: once its dependencies are done)"},
		{"record", "a step's last job completed → step recorded"}, {"handoff", "a dependency's last job completed → next step's plan_apply queued, or given its deferred inputs"},
		{"handoff-record", "prestarted: dependency's job completed → its step recorded"}, {"handoff-inputs", "→ inputs given"},
		{"handoff-runner", "→ the runner has them"}, {"handoff-deliver", "→ the job process has them"},
		{"end", "last job completed → operation recorded finished"}, {"seen", "→ client saw it"},
	} {
		fmt.Fprintf(&b, " %s %.0f/%.0f;", g.what, a.gap[g.key]*1000, a.gapMax[g.key]*1000)
	}
	b.WriteString("\n")
	for _, kind := range slices.Sorted(maps.Keys(a.count)) {
		fmt.Fprintf(&b, "%s job (ms, mean of %d):", kind, a.count[kind])
		for i := range provNumPhases {
			fmt.Fprintf(&b, " %s %.0f", provPhaseNames[i], a.phase[kind][i]*1000)
		}
		fmt.Fprintf(&b, "; claim → completed %.0f\n", a.jobMean(kind)*1000)
	}
	return strings.TrimRight(b.String(), "\n")
}

// ---- helpers ---------------------------------------------------------------

// provBenchSelfCPU is this process's CPU time so far (user + system).
func provBenchSelfCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func provBenchEnv(tb testing.TB, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		tb.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

func provBenchMedian(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func provBenchSeconds(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprintf("%.2f", d.Seconds())
	}
	return strings.Join(parts, " ")
}

func provBenchMinTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func provBenchMaxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
