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
// docs/BENCHMARKS.md ("Provisioning overhead") holds the figures and what
// they mean.

import (
	"bytes"
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
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/outpost-dev/outpost/activities"
	"github.com/outpost-dev/outpost/api"
	"github.com/outpost-dev/outpost/api/gateway"
	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/plugins/terraform"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
	"github.com/outpost-dev/outpost/worker"
)

const (
	// provBenchComponents is N, the number of components besides the sandbox.
	provBenchComponents = 2
	// provBenchReps is how many timed repetitions each shape gets (after one
	// untimed warm-up of each contender); medians are reported.
	provBenchReps = 1
)

// BenchmarkProvisionOverhead provisions an N-component app in two shapes:
//
//   - chain: c1 → c2 → … → cN, each component reading the previous one's
//     output through a template (c1 reads the sandbox's);
//   - fanout: N components that each read the sandbox's output and depend on
//     nothing else, so the runner may run up to --concurrency (4) jobs at once.
//
// Each repetition times, in rotating order: an Outpost provision on a fresh
// install (from POST …/provision to the API answering that the operation
// finished), and two script variants run by /bin/sh in fresh directories:
// "apply" (terraform init + apply -auto-approve per module) and "plan-apply"
// (init + plan -out + apply of the saved plan: what Outpost runs, as two jobs,
// per component).
func BenchmarkProvisionOverhead(b *testing.B) {
	tf, err := terraform.Find("", os.Getenv("PATH"), "..")
	if err != nil {
		b.Skip(err)
	}
	for _, shape := range []string{"chain", "fanout"} {
		b.Run(fmt.Sprintf("%s/n=%d", shape, provBenchComponents), func(b *testing.B) {
			benchProvisionShape(b, tf, shape, provBenchComponents, provBenchReps)
		})
	}
}

func benchProvisionShape(b *testing.B, tf, shape string, n, reps int) {
	app := filepath.Join(b.TempDir(), "app")
	writeProvBenchApp(b, app, shape, n)
	s := newProvBench(b, tf)
	s.sync(app)
	sc := newProvBenchScript(b, tf, app, shape, n)

	// Warm-up, untimed: the first workflow run, the first terraform runs.
	s.provision(shape, n)
	sc.run(false)
	sc.run(true)

	var outpost, scriptApply, scriptPlan []time.Duration
	var runs []provBenchRun
	for rep := range reps {
		// Rotate the order so that a slow spell of the (shared) machine does
		// not always hit the same contender.
		for k := range 3 {
			switch (rep + k) % 3 {
			case 0:
				r := s.provision(shape, n)
				runs = append(runs, r)
				outpost = append(outpost, r.total)
			case 1:
				scriptApply = append(scriptApply, sc.run(false))
			case 2:
				scriptPlan = append(scriptPlan, sc.run(true))
			}
		}
	}

	o, sa, sp := median(outpost), median(scriptApply), median(scriptPlan)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(o.Seconds(), "outpost-s")
	b.ReportMetric(sa.Seconds(), "script-apply-s")
	b.ReportMetric(sp.Seconds(), "script-plan-apply-s")
	b.ReportMetric(o.Seconds()/sa.Seconds(), "x-script-apply")
	b.ReportMetric(o.Seconds()/sp.Seconds(), "x-script-plan-apply")

	// Where Outpost's time goes (all timed repetitions together).
	agg := aggregateProvBench(runs)
	steps := float64(n + 1)
	b.ReportMetric(agg.share.controlPlane.Seconds()/float64(len(runs))/steps*1000, "cp-ms/step")
	b.ReportMetric(agg.phase[phaseQueued]*1000, "claim-ms/job")
	b.ReportMetric(agg.runnerOverhead()*1000, "runner-ms/job")
	b.ReportMetric(agg.terraformTime()*1000, "tf-ms/job")

	b.Logf("%s, N=%d, %d timed repetitions (medians): outpost %.2fs, script apply %.2fs, script plan+apply %.2fs; ratios %.2f× and %.2f×",
		shape, n, reps, o.Seconds(), sa.Seconds(), sp.Seconds(), o.Seconds()/sa.Seconds(), o.Seconds()/sp.Seconds())
	b.Logf("  outpost  runs: %s", fmtDurations(outpost))
	b.Logf("  script apply: %s", fmtDurations(scriptApply))
	b.Logf("  script plan+apply: %s", fmtDurations(scriptPlan))
	b.Logf("%s", agg.report(len(runs), n))
}

// ---- the app config --------------------------------------------------------

// writeProvBenchApp writes an app config of n components: a sandbox module
// and one component module shared by every component.
func writeProvBenchApp(tb testing.TB, dir, shape string, n int) {
	tb.Helper()
	files := map[string]string{
		"outpost.toml": "# Generated by BenchmarkProvisionOverhead.\n[app]\nname = \"demo\"\n\n[sandbox]\nsource = \"sandbox\"\n",
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

// script is the shell script: the sandbox, then each component, one after
// the other; each output a later module needs is read with terraform output.
func (sc *provBenchScript) script(plan bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/sh\nset -eu\ntf=%q\nroot=\"$1\"\nlog=\"$root/log\"\n", sc.tf)
	deploy := func(dir, vars string) {
		fmt.Fprintf(&b, "cd \"$root/%s\"\n\"$tf\" init -input=false -no-color >>\"$log\"\n", dir)
		if plan {
			fmt.Fprintf(&b, "\"$tf\" plan -input=false -no-color -out=tfplan%s >>\"$log\"\n\"$tf\" apply -input=false -no-color tfplan >>\"$log\"\n", vars)
		} else {
			fmt.Fprintf(&b, "\"$tf\" apply -auto-approve -input=false -no-color%s >>\"$log\"\n", vars)
		}
	}
	deploy("sandbox", "")
	b.WriteString("sandbox=$(\"$tf\" output -raw id)\nprev=\"$sandbox\"\n")
	for i := 1; i <= sc.n; i++ {
		deploy(fmt.Sprintf("c%d", i), fmt.Sprintf(" -var name=c%d -var \"prev=$prev\"", i))
		if sc.shape == "chain" || i == sc.n {
			b.WriteString("prev=$(\"$tf\" output -raw value)\n")
		}
	}
	b.WriteString("printf '%s %s' \"$sandbox\" \"$prev\"\n")
	return b.String()
}

// run prepares fresh directories (untimed), then times the script.
func (sc *provBenchScript) run(plan bool) time.Duration {
	tb := sc.tb
	tb.Helper()
	sc.runs++
	root := filepath.Join(tb.TempDir(), fmt.Sprintf("script-%d", sc.runs))
	copyTree(tb, filepath.Join(sc.app, "sandbox"), filepath.Join(root, "sandbox"))
	for i := 1; i <= sc.n; i++ {
		copyTree(tb, filepath.Join(sc.app, "modules", "component"), filepath.Join(root, fmt.Sprintf("c%d", i)))
	}
	path := filepath.Join(root, "provision.sh")
	if err := os.WriteFile(path, []byte(sc.script(plan)), 0o755); err != nil {
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
		tb.Fatalf("script (plan=%v): %v\n%s\n%s", plan, err, stderr.String(), log)
	}
	sandbox, last, _ := strings.Cut(out.String(), " ")
	if want := provBenchWantLast(sc.shape, sc.n, sandbox); last != want {
		tb.Fatalf("script (plan=%v): last output %q, want %q", plan, last, want)
	}
	return d
}

func copyTree(tb testing.TB, from, to string) {
	tb.Helper()
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
		tb.Fatal(err)
	}
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
	api      *httptest.Server
	gw       *httptest.Server
	token    string
	orgID    string
	appID    string
	installs int
}

func newProvBench(tb testing.TB, tf string) *provBench {
	tb.Helper()
	log := slog.New(slog.NewTextHandler(tbLogWriter{tb}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s := storetest.Open(tb, store.Postgres)
	ctx, cancel := context.WithCancel(context.Background())
	gwDone := make(chan struct{})
	tb.Cleanup(func() { cancel(); <-gwDone })
	tc, err := client.Dial(client.Options{HostPort: temporal.FrontendAddress(), Namespace: temporal.Namespace(),
		Logger: tlog.NewStructuredLogger(log)})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(tc.Close)
	g := gateway.New(gateway.Config{Store: s, Logger: log})
	go func() { g.Run(ctx); close(gwDone) }()
	queue := "bench-" + strings.NewReplacer("/", "-", "=", "-").Replace(tb.Name())
	a := api.New(api.Config{Store: s, Ops: &worker.Operations{Client: tc, TaskQueue: queue}, Logger: log})
	p := &provBench{tb: tb, tf: tf, store: s, api: httptest.NewServer(a.Handler()), gw: httptest.NewServer(g.Handler())}
	tb.Cleanup(p.api.Close)
	tb.Cleanup(p.gw.Close)
	w := worker.New(worker.Config{Client: tc, Store: s, TaskQueue: queue, Logger: log,
		Operations: activities.OperationConfig{GatewayURL: p.gw.URL}})
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
	return p
}

func (p *provBench) do(method, path string, body, out any) int {
	p.tb.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, p.api.URL+path, rd)
	req.Header.Set("Authorization", "Bearer "+p.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			p.tb.Fatalf("%s %s: decode %q: %v", method, path, raw, err)
		}
	}
	return resp.StatusCode
}

func (p *provBench) sync(dir string) {
	p.tb.Helper()
	archive, err := appconfig.ArchiveDir(os.DirFS(dir), ".")
	if err != nil {
		p.tb.Fatal(err)
	}
	req, _ := http.NewRequest("POST", p.api.URL+"/v1/apps/"+p.appID+"/configs", bytes.NewReader(archive))
	req.Header.Set("Authorization", "Bearer "+p.token)
	req.Header.Set("Content-Type", "application/gzip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.tb.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		b, _ := io.ReadAll(resp.Body)
		p.tb.Fatalf("sync %s: %d %s", dir, resp.StatusCode, b)
	}
}

// startRunner starts a real outpost-runner for an install, with the default
// concurrency, and returns a function that stops it (SIGTERM).
func (p *provBench) startRunner(regToken string) func() {
	p.tb.Helper()
	cmd := exec.Command(runnerBin, "run", "--gateway", p.gw.URL, "--work-dir", p.tb.TempDir(), "--terraform", p.tf)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "OUTPOST_TOKEN=" + regToken}
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		p.tb.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	stopped := false
	stop := func() {
		if stopped {
			return
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
	}
	p.tb.Cleanup(stop)
	return stop
}

// provBenchOp is the API's view of an operation.
type provBenchOp struct {
	ID         string     `json:"id"`
	Status     string     `json:"status"`
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
	if op.Status != store.OpSucceeded {
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
	return p.breakdown(inst, op.ID, start, end)
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
//	prep    claimed → the runner's "starting job" line (claim answer, job dir)
//	spawn   → "outpost: terraform v…" (job process, module unpacked, terraform version)
//	init    → the end of terraform init's output
//	work    → the job's last line (plan + show + show -json, or apply + output)
//	finish  → completed (finished_at): process exit, log shipping, completion
const (
	phaseQueued = iota
	phasePrep
	phaseSpawn
	phaseInit
	phaseWork
	phaseFinish
	numPhases
)

var phaseNames = [numPhases]string{"queued (enqueue→claim)", "prep (claim→job start)", "spawn (job process, unpack, terraform version)",
	"terraform init", "terraform plan/show or apply/output", "finish (exit, logs, complete)"}

type provBenchJob struct {
	step, kind      string // kind: plan or apply
	created         time.Time
	started, ended  time.Time
	phases          [numPhases]time.Duration
	phasesKnown     bool
	stepStartedAt   time.Time
	stepFinishedAt  time.Time
	beforeEnqueue   time.Duration // plan: step started → enqueued; apply: plan done → enqueued
	afterCompletion time.Duration // apply: completed → step recorded finished
}

// provBenchRun is one timed provision.
type provBenchRun struct {
	total  time.Duration
	jobs   []provBenchJob
	share  provBenchShare
	maxPar int
	// opStart: POST → the first job enqueued; opEnd: the last job completed
	// → the client saw the operation finished.
	opStart, opEnd time.Duration
}

// provBenchShare splits a provision's wall time by what was going on: at
// least one job on the runner; jobs queued but none running; or neither —
// only the control plane (workflow tasks, activities, store) at work.
type provBenchShare struct {
	running, queuedOnly, controlPlane time.Duration
}

func (p *provBench) breakdown(inst, opID string, start, end time.Time) provBenchRun {
	tb := p.tb
	ctx := context.Background()
	op, err := p.store.GetOperation(ctx, p.orgID, opID)
	if err != nil {
		tb.Fatal(err)
	}
	run := provBenchRun{total: end.Sub(start)}
	for _, st := range op.Steps {
		for _, j := range []struct {
			kind string
			id   *string
		}{{"plan", st.PlanJobID}, {"apply", st.ApplyJobID}} {
			if j.id == nil {
				tb.Fatalf("step %s has no %s job", st.Name, j.kind)
			}
			job, err := p.store.GetJob(ctx, p.orgID, *j.id)
			if err != nil {
				tb.Fatal(err)
			}
			if job.StartedAt == nil || job.FinishedAt == nil {
				tb.Fatalf("job %s has no start or end", job.ID)
			}
			bj := provBenchJob{step: st.Name, kind: j.kind, created: job.CreatedAt, started: *job.StartedAt, ended: *job.FinishedAt}
			if st.StartedAt != nil {
				bj.stepStartedAt = *st.StartedAt
			}
			if st.FinishedAt != nil {
				bj.stepFinishedAt = *st.FinishedAt
			}
			bj.phases[phaseQueued] = bj.started.Sub(bj.created)
			p.jobPhases(&bj, job.ID)
			run.jobs = append(run.jobs, bj)
		}
	}
	// The gaps between a step's jobs, recorded by the workflow.
	byStep := map[string][]*provBenchJob{}
	for i := range run.jobs {
		byStep[run.jobs[i].step] = append(byStep[run.jobs[i].step], &run.jobs[i])
	}
	for _, js := range byStep {
		plan, apply := js[0], js[1]
		plan.beforeEnqueue = plan.created.Sub(plan.stepStartedAt)
		apply.beforeEnqueue = apply.created.Sub(plan.ended)
		apply.afterCompletion = apply.stepFinishedAt.Sub(apply.ended)
	}
	first, last := run.jobs[0].created, run.jobs[0].ended
	for _, j := range run.jobs {
		first = minTime(first, j.created)
		last = maxTime(last, j.ended)
	}
	run.opStart, run.opEnd = first.Sub(start), end.Sub(last)
	run.share, run.maxPar = shareOf(run.jobs, start, end)
	return run
}

// jobPhases splits a job's run with the times of its log lines.
func (p *provBench) jobPhases(j *provBenchJob, jobID string) {
	chunks, err := p.store.ListLogs(context.Background(), jobID, store.LogCursor{}, 10000)
	if err != nil {
		p.tb.Fatal(err)
	}
	var tStart, tTF, tInit, tLast time.Time
	if os.Getenv("PROVBENCH_DUMP") != "" && j.step == "c1" {
		for _, c := range chunks {
			fmt.Fprintf(os.Stderr, "DUMP %s %s %s %q\n", j.kind, c.Time.Format("15:04:05.000000"), c.Stream, c.Data)
		}
	}
	for _, c := range chunks {
		switch {
		case tStart.IsZero() && strings.HasPrefix(c.Data, "runner: starting job"):
			tStart = c.Time
		case tTF.IsZero() && strings.HasPrefix(c.Data, "outpost: terraform v"):
			tTF = c.Time
		case strings.Contains(c.Data, "Terraform has been successfully initialized"),
			tInit.IsZero() && !tTF.IsZero() && strings.Contains(c.Data, "rerun this command to reinitialize"):
			tInit = c.Time
		}
		if !tInit.IsZero() && strings.Contains(c.Data, "rerun this command to reinitialize") {
			tInit = c.Time // the last line of init's output
		}
		tLast = maxTime(tLast, c.Time)
	}
	if tStart.IsZero() || tTF.IsZero() || tInit.IsZero() {
		p.tb.Logf("job %s (%s %s): phase markers not found in %d log lines", jobID, j.step, j.kind, len(chunks))
		return
	}
	j.phases[phasePrep] = tStart.Sub(j.started)
	j.phases[phaseSpawn] = tTF.Sub(tStart)
	j.phases[phaseInit] = tInit.Sub(tTF)
	j.phases[phaseWork] = tLast.Sub(tInit)
	j.phases[phaseFinish] = j.ended.Sub(tLast)
	j.phasesKnown = true
}

// shareOf sweeps [start, end] and attributes each instant to running (a job
// claimed and not completed), queued only, or the control plane alone.
func shareOf(jobs []provBenchJob, start, end time.Time) (provBenchShare, int) {
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

type provBenchAgg struct {
	runs            int
	share           provBenchShare // summed over runs
	phase           [numPhases]float64
	known           int
	jobs            int
	planEnqueue     float64 // mean s: step started → plan enqueued
	applyEnqueue    float64 // mean s: plan completed → apply enqueued
	stepRecord      float64 // mean s: apply completed → step finished
	opStart, opEnd  float64 // mean s per run
	maxPar          int
	total           float64 // mean s per run
	perKind         map[string][numPhases]float64
	perKindN        map[string]int
	chainHandoff    float64 // mean s: a step finished → the next step's plan enqueued (the chain)
	chainHandoffN   int
	stepsPerRunMean float64
}

func aggregateProvBench(runs []provBenchRun) provBenchAgg {
	a := provBenchAgg{runs: len(runs), perKind: map[string][numPhases]float64{}, perKindN: map[string]int{}}
	var nPlan, nApply int
	for _, r := range runs {
		a.share.running += r.share.running
		a.share.queuedOnly += r.share.queuedOnly
		a.share.controlPlane += r.share.controlPlane
		a.opStart += r.opStart.Seconds()
		a.opEnd += r.opEnd.Seconds()
		a.total += r.total.Seconds()
		a.maxPar = max(a.maxPar, r.maxPar)
		for _, j := range r.jobs {
			a.jobs++
			a.phase[phaseQueued] += j.phases[phaseQueued].Seconds()
			if j.phasesKnown {
				a.known++
				k := a.perKind[j.kind]
				for i := phasePrep; i < numPhases; i++ {
					a.phase[i] += j.phases[i].Seconds()
					k[i] += j.phases[i].Seconds()
				}
				k[phaseQueued] += j.phases[phaseQueued].Seconds()
				a.perKind[j.kind] = k
				a.perKindN[j.kind]++
			}
			if j.kind == "plan" {
				a.planEnqueue += j.beforeEnqueue.Seconds()
				nPlan++
			} else {
				a.applyEnqueue += j.beforeEnqueue.Seconds()
				a.stepRecord += j.afterCompletion.Seconds()
				nApply++
			}
		}
		// Chain hand-offs: each plan enqueued after the latest apply that
		// completed before it.
		for _, j := range r.jobs {
			if j.kind != "plan" || j.step == store.SandboxStep {
				continue
			}
			var prev time.Time
			for _, k := range r.jobs {
				if k.kind == "apply" && k.ended.Before(j.created) && k.ended.After(prev) {
					prev = k.ended
				}
			}
			if !prev.IsZero() {
				a.chainHandoff += j.created.Sub(prev).Seconds()
				a.chainHandoffN++
			}
		}
	}
	if a.jobs > 0 {
		a.phase[phaseQueued] /= float64(a.jobs)
	}
	if a.known > 0 {
		for i := phasePrep; i < numPhases; i++ {
			a.phase[i] /= float64(a.known)
		}
	}
	for k, v := range a.perKind {
		for i := range v {
			v[i] /= float64(a.perKindN[k])
		}
		a.perKind[k] = v
	}
	if nPlan > 0 {
		a.planEnqueue /= float64(nPlan)
	}
	if nApply > 0 {
		a.applyEnqueue /= float64(nApply)
		a.stepRecord /= float64(nApply)
	}
	if a.chainHandoffN > 0 {
		a.chainHandoff /= float64(a.chainHandoffN)
	}
	if a.runs > 0 {
		a.opStart /= float64(a.runs)
		a.opEnd /= float64(a.runs)
		a.total /= float64(a.runs)
	}
	return a
}

// runnerOverhead is the mean per job of what the runner adds around
// terraform: prep, spawn (which includes terraform version) and finish.
func (a provBenchAgg) runnerOverhead() float64 {
	return a.phase[phasePrep] + a.phase[phaseSpawn] + a.phase[phaseFinish]
}

// terraformTime is the mean per job of terraform's own commands after
// version: init and the operation.
func (a provBenchAgg) terraformTime() float64 { return a.phase[phaseInit] + a.phase[phaseWork] }

func (a provBenchAgg) report(runs, n int) string {
	var b strings.Builder
	sec := func(d time.Duration) float64 { return d.Seconds() / float64(runs) }
	fmt.Fprintf(&b, "where Outpost's time goes (means over %d provisions, %d jobs; %d with phase markers):\n", runs, a.jobs, a.known)
	fmt.Fprintf(&b, "  wall time %.2fs = a job running %.2fs + jobs queued, none running %.2fs + control plane only %.2fs; at most %d jobs ran at once\n",
		a.total, sec(a.share.running), sec(a.share.queuedOnly), sec(a.share.controlPlane), a.maxPar)
	fmt.Fprintf(&b, "  POST → first job enqueued %.0fms; last job completed → client saw the end %.0fms\n", a.opStart*1000, a.opEnd*1000)
	fmt.Fprintf(&b, "  per step (%d steps): step started → plan enqueued %.0fms; plan completed → apply enqueued %.0fms; apply completed → step recorded %.0fms",
		n+1, a.planEnqueue*1000, a.applyEnqueue*1000, a.stepRecord*1000)
	if a.chainHandoffN > 0 {
		fmt.Fprintf(&b, "; dependency's apply completed → next plan enqueued %.0fms", a.chainHandoff*1000)
	}
	b.WriteString("\n  per job (ms):           ")
	kinds := []string{"plan", "apply"}
	for _, k := range kinds {
		fmt.Fprintf(&b, "%10s", k)
	}
	b.WriteString("\n")
	for i := range numPhases {
		fmt.Fprintf(&b, "    %-48s", phaseNames[i])
		for _, k := range kinds {
			fmt.Fprintf(&b, "%10.0f", a.perKind[k][i]*1000)
		}
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// ---- helpers ---------------------------------------------------------------

func median(ds []time.Duration) time.Duration {
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

func fmtDurations(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprintf("%.2fs", d.Seconds())
	}
	return strings.Join(parts, " ")
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

type tbLogWriter struct{ tb testing.TB }

func (w tbLogWriter) Write(p []byte) (int, error) {
	w.tb.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
