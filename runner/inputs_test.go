package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/plugins"
)

// jobTypeEchoInputs is a test job type that takes deferred inputs: it says
// it is ready, waits for its inputs, sleeps as long as they say (sleep_ms),
// and returns them as its outputs.
const jobTypeEchoInputs = "test-echo-inputs"

// testPlugins are the job process's plugins in this package's test binary.
func testPlugins() plugins.Registry {
	r := builtinPlugins()
	r[jobTypeEchoInputs] = func() plugins.Plugin { return &echoInputs{} }
	return r
}

type echoInputs struct{ got json.RawMessage }

func (*echoInputs) Validate(json.RawMessage) error { return nil }
func (*echoInputs) TakesDeferredInputs()           {}
func (p *echoInputs) Execute(ctx context.Context, run plugins.Run) (int, error) {
	fmt.Fprintf(run.Stdout, "nice while preparing: %d\n", niceOf(os.Getpid()))
	fmt.Fprintln(run.Stdout, "prepared, waiting for the inputs")
	raw, err := run.Inputs(ctx)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(run.Stdout, "nice with the inputs: %d\n", niceOf(os.Getpid()))
	var in struct {
		SleepMS int `json:"sleep_ms"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return 0, err
	}
	time.Sleep(time.Duration(in.SleepMS) * time.Millisecond)
	p.got = raw
	fmt.Fprintln(run.Stdout, "done")
	return 0, nil
}
func (p *echoInputs) Outputs() (json.RawMessage, error) { return p.got, nil }
func (*echoInputs) Cleanup() error                      { return nil }

func deferredJob(id string, timeoutMS int64) protocol.Job {
	return protocol.Job{ID: id, Type: jobTypeEchoInputs, Attempt: 1, TimeoutMS: timeoutMS, InputsDeferred: true}
}

// A job queued with deferred inputs prepares, then waits for them: they come
// with a job heartbeat and reach the job process, which runs with them. The
// job's timeout counts from their arrival, not from the claim.
func TestDeferredInputsReachTheJobAndStartItsTimeout(t *testing.T) {
	g := newTestGateway(t)
	job := deferredJob("job-inputs", 1500)
	const secret = "inputs-secret-value"
	onLine(g, "prepared, waiting", func(id string) {
		go func() {
			time.Sleep(2 * time.Second) // longer than the timeout
			g.update(func() {
				g.inputs[id] = json.RawMessage(`{"sleep_ms": 100, "password": "` + secret + `"}`)
			})
		}()
	})
	supervise(t, g, job)

	done := g.completion(job.ID)
	if done.Status != protocol.StatusSucceeded {
		t.Fatalf("completion %+v: want succeeded (the timeout counts from the inputs)", done)
	}
	var out struct {
		SleepMS  int    `json:"sleep_ms"`
		Password string `json:"password"`
	}
	if err := json.Unmarshal(done.Outputs, &out); err != nil || out.Password != secret || out.SleepMS != 100 {
		t.Fatalf("outputs %s (%v): want the inputs given", done.Outputs, err)
	}
	if !g.logged(job.ID, protocol.StreamSystem, "the job's inputs arrived") {
		t.Error("no system line about the inputs")
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, c := range g.logs[job.ID] {
		if strings.Contains(c.Data, secret) {
			t.Errorf("the inputs were logged: %q", c.Data)
		}
	}
	if g.wantedInputs[job.ID] == 0 {
		t.Error("no heartbeat asked for the inputs")
	}
}

// A job whose inputs never come is cancelled while it waits.
func TestDeferredJobCancelledWhileWaiting(t *testing.T) {
	g := newTestGateway(t)
	job := deferredJob("job-inputs-cancel", 0)
	onLine(g, "prepared, waiting", func(id string) { g.cancelled[id] = true })
	supervise(t, g, job)
	done := g.completion(job.ID)
	if done.Status != protocol.StatusCancelled {
		t.Fatalf("completion %+v: want cancelled", done)
	}
}

// A job type that cannot wait for inputs refuses a job whose inputs are
// deferred, rather than running without them.
func TestDeferredInputsRefusedByOtherPlugins(t *testing.T) {
	g := newTestGateway(t)
	job := commandJob("job-inputs-command", "echo ran")
	job.InputsDeferred = true
	supervise(t, g, job)
	done := g.completion(job.ID)
	if done.Status != protocol.StatusFailed || !strings.Contains(done.Error, "cannot run a job whose inputs are deferred") {
		t.Fatalf("completion %+v: want refused", done)
	}
	if g.logged(job.ID, protocol.StreamStdout, "ran") {
		t.Error("the command ran")
	}
}

// A job waiting for its inputs gives its working place back: on a runner
// that runs one job at a time, the job it waits for (queued after it, as
// after a lost attempt) still runs. Once its inputs come it takes the place
// again and runs.
func TestWaitingJobGivesItsPlaceBack(t *testing.T) {
	g := newTestGateway(t)
	stop, _, _ := startRunner(t, g, Config{Token: g.registrationToken, Concurrency: 1})
	waiting := deferredJob("job-waits", 60_000)
	g.update(func() { g.queue = append(g.queue, waiting) })
	g.waitFor("the job to wait for its inputs", func() bool { return g.wantedInputs[waiting.ID] > 0 })
	if done := runOneJob(g, noopJob("job-dependency", nil)); done.Status != protocol.StatusSucceeded {
		t.Fatalf("the job the waiting one waits for: %+v", done)
	}
	g.update(func() { g.inputs[waiting.ID] = json.RawMessage(`{"sleep_ms": 1}`) })
	g.waitFor("the waiting job's completion", func() bool { return len(g.completions[waiting.ID]) > 0 })
	if done := g.completion(waiting.ID); done.Status != protocol.StatusSucceeded {
		t.Fatalf("the waiting job: %+v", done)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// A runner that shuts down lets a job that still waits for its inputs go at
// once, without a completion: its lease expires and the control plane
// queues it again (a cancel would fail its step).
func TestShutdownLetsAWaitingJobGo(t *testing.T) {
	g := newTestGateway(t)
	stop, _, _ := startRunner(t, g, Config{Token: g.registrationToken, ShutdownTimeout: time.Minute})
	job := deferredJob("job-let-go", 60_000)
	g.update(func() { g.queue = append(g.queue, job) })
	g.waitFor("the job to wait for its inputs", func() bool { return g.wantedInputs[job.ID] > 0 })
	began := time.Now()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(began); d > 30*time.Second {
		t.Errorf("the runner took %s to stop: it held the waiting job until its shutdown timeout", d)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if c := g.completions[job.ID]; len(c) != 0 {
		t.Fatalf("the waiting job was completed %+v; want it left to be retried", c)
	}
	found := false
	for _, c := range g.logs[job.ID] {
		found = found || strings.Contains(c.Data, "letting it go, to be retried")
	}
	if !found {
		t.Error("no system line says the job was let go")
	}
}

// A job whose inputs do not come within its bound fails, saying so.
func TestDeferredInputsThatNeverComeFailTheJob(t *testing.T) {
	g := newTestGateway(t)
	job := deferredJob("job-no-inputs", 0)
	job.InputsWaitMS = 300
	supervise(t, g, job)
	if done := g.completion(job.ID); done.Status != protocol.StatusFailed || !strings.Contains(done.Error, "inputs did not come within 300ms") {
		t.Fatalf("completion %+v: want failed, saying the inputs did not come", done)
	}
}

// A runner asks for jobs with deferred inputs only while it has a waiting
// place free: with one, a second such job stays queued (a plain job is
// still claimed) until the first has run.
func TestWaitingPlacesBoundTheJobsThatWait(t *testing.T) {
	g := newTestGateway(t)
	stop, _, _ := startRunner(t, g, Config{Token: g.registrationToken, Concurrency: 1})
	first, second := deferredJob("job-waits-1", 60_000), deferredJob("job-waits-2", 60_000)
	g.update(func() { g.queue = append(g.queue, first, second) })
	g.waitFor("the first to wait for its inputs", func() bool { return g.wantedInputs[first.ID] > 0 })
	if done := runOneJob(g, noopJob("job-plain", nil)); done.Status != protocol.StatusSucceeded {
		t.Fatalf("a plain job while one waits: %+v", done)
	}
	g.mu.Lock()
	queued := len(g.queue) == 1 && g.queue[0].ID == second.ID
	g.mu.Unlock()
	if !queued {
		t.Fatal("the second job with deferred inputs was claimed while the only waiting place was taken")
	}
	g.update(func() { g.inputs[first.ID] = json.RawMessage(`{"sleep_ms": 1}`) })
	g.waitFor("the second to wait for its inputs", func() bool { return g.wantedInputs[second.ID] > 0 })
	g.update(func() { g.inputs[second.ID] = json.RawMessage(`{"sleep_ms": 1}`) })
	g.waitFor("both completions", func() bool { return len(g.completions[first.ID]) > 0 && len(g.completions[second.ID]) > 0 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// niceOf is the process's nice value, as the kernel reports it (the 19th
// field of /proc/<pid>/stat).
func niceOf(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -100
	}
	_, rest, _ := strings.Cut(string(b), ") ") // the command may hold spaces
	f := strings.Fields(rest)
	n, err := strconv.Atoi(f[16]) // field 19 of the whole line
	if err != nil {
		return -100
	}
	return n
}

// A job queued with deferred inputs prepares at a lower CPU priority (nice
// +10 from the runner's), so that work done ahead of need does not slow
// the jobs that have their inputs; once they come it runs at the runner's
// own priority. (A runner that could not raise it back, without
// CAP_SYS_NICE, does not lower it: the test is skipped there.)
func TestPreparingJobRunsAtALowerPriority(t *testing.T) {
	if newPriorities().lower == 0 {
		t.Skip("this process may not raise a priority back (no CAP_SYS_NICE, RLIMIT_NICE): the runner does not lower it")
	}
	g := newTestGateway(t)
	job := deferredJob("job-nice", 0)
	onLine(g, "prepared, waiting", func(id string) {
		go g.update(func() { g.inputs[id] = json.RawMessage(`{"sleep_ms": 0}`) })
	})
	supervise(t, g, job)
	if done := g.completion(job.ID); done.Status != protocol.StatusSucceeded {
		t.Fatalf("completion %+v", done)
	}
	own, lower := niceOf(os.Getpid()), newPriorities().lower
	if lower != prestartNice {
		t.Fatalf("lowered by %d, want %d", lower, prestartNice)
	}
	for _, want := range []string{fmt.Sprintf("nice while preparing: %d", min(own+lower, 19)), fmt.Sprintf("nice with the inputs: %d", own)} {
		if !g.logged(job.ID, protocol.StreamStdout, want) {
			g.mu.Lock()
			t.Errorf("the job did not log %q (runner at nice %d, lowering by %d):\n%v", want, own, lower, g.logs[job.ID])
			g.mu.Unlock()
		}
	}
}
