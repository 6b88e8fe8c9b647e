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
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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

	org, tok, app := storetest.NewOrgApp(tb, s, "acme")
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
