package gateway_test

// Load benchmarks (issue 20): the gateway is the real `outpost api` binary,
// a process of its own on a fresh PostgreSQL database, beside `outpost
// temporal` (and `outpost worker` where jobs run through workflows). The
// simulated runners are this process's goroutines, as in bench_test.go. In
// one process, 10,000 runners would need 20,000 sockets, over the hard
// open-file limit of a container without CAP_SYS_RESOURCE; split, each side
// holds 10,000. Run them with
//
//	go tool task load
//
// docs/BENCHMARKS.md and docs/RELIABILITY.md (Load) hold the figures.

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/activities"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/seal"
	"github.com/outpost-dev/outpost/store/storetest"
)

// loadGatewayFlags are the gateway's intervals under load: production's
// 25 s claim wait, and a lease shortened from 60 s to 10 s, renewed every
// 2 s, so that a killed runner's job is marked lost (and retried) within
// seconds; the lease reaper runs every lease/4.
var loadGatewayFlags = []string{"-claim-wait", production.ClaimWait().String(), "-lease", "10s", "-job-heartbeat", "2s"}

// BenchmarkLoadClaimLatency is BenchmarkClaimLatency with the gateway in a
// process of its own, with 1000 runners (to compare) and 10,000.
func BenchmarkLoadClaimLatency(b *testing.B) {
	bin := buildOutpost(b)
	for _, n := range []int{1000, 10_000} {
		b.Run(fmt.Sprintf("runners=%d", n), func(b *testing.B) {
			raiseFileLimit(b, uint64(n+4096))
			e := startPlane(b, bin).env(b)
			benchClaimLatency(b, e, n, production.ClaimWait())
		})
	}
}

// BenchmarkLoadIdleRunners measures what idle runners cost the gateway
// process: its resident memory per runner, and its CPU per second and the
// database transactions committed (every process's) over two 60 s windows
// once every runner has polled: the long polls alone, then with the
// runners' quiet heartbeats (health spec held, nothing changed: one every
// QuietHeartbeat), once every runner's first heartbeat was answered.
// OUTPOST_LOAD_PERF_DIR keeps a perf profile of the gateway per window.
func BenchmarkLoadIdleRunners(b *testing.B) {
	bin := buildOutpost(b)
	for _, n := range []int{1000, 10_000} {
		b.Run(fmt.Sprintf("runners=%d", n), func(b *testing.B) {
			raiseFileLimit(b, uint64(n+4096))
			p := startPlane(b, bin)
			e := p.env(b)
			runners := registerRunners(b, e, n)
			_, rss0 := p.api.usage(b)
			f := startFleet(b, e, runners, production.ClaimWait(), func(context.Context, int, protocol.Job, time.Time) error {
				return fmt.Errorf("an idle runner got a job")
			})
			defer f.stop()
			f.waitIdle(b)
			polls := idleWindow(b, p, e, f, nil, fmt.Sprintf("gateway-polls-%d", n))
			hb := startHeartbeats(b, f, production)
			hb.waitFirst(b, f)
			both := idleWindow(b, p, e, f, hb, fmt.Sprintf("gateway-polls-heartbeats-%d", n))
			f.check(b)
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(polls.cpuPerSec, "gw-cpu-ms/s")
			b.ReportMetric(both.cpuPerSec-polls.cpuPerSec, "hb-cpu-ms/s")
			b.ReportMetric((float64(both.rss)-float64(rss0))/1024/float64(n), "gw-rss-KiB/runner")
			b.ReportMetric(polls.polls, "polls/min")
			b.ReportMetric(polls.xact, "db-xact/min")
			b.ReportMetric(both.xact, "hb-db-xact/min")
			b.ReportMetric(both.heartbeats, "heartbeats/min")
			b.ReportMetric(both.hbBytes/float64(n), "hb-bytes/runner/min")
			b.Logf("%d idle runners: gateway RSS %d MiB before the runners polled, %d MiB idle; CPU %.1f ms/s polling, %.1f ms/s with heartbeats",
				n, rss0>>20, both.rss>>20, polls.cpuPerSec, both.cpuPerSec)
		})
	}
}

// buildOutpost builds cmd/outpost for the benchmark and its sub-benchmarks.
func buildOutpost(b *testing.B) string {
	return filepath.Join(testutil.Build(b, "../../cmd/outpost"), "outpost")
}

// plane is the control plane as processes on a fresh PostgreSQL database,
// and a store of the benchmark's own on it.
type plane struct {
	apiArgs      []string
	common       []string // the flags every process takes: database, Temporal, task queue, KEK
	bin          string
	temporalAddr string
	api          *proc
	temporal     *proc
	gwURL        string
	store        *store.Store
}

// startPlane migrates a fresh database and starts `outpost temporal` and
// `outpost api` (the API answers too, but nothing here calls it).
func startPlane(b *testing.B, bin string) *plane {
	p := &plane{bin: bin}
	db := storetest.NewPostgresDatabase(b)
	kekFile := filepath.Join(b.TempDir(), "kek")
	kek, _, err := seal.LoadOrCreateLocalKey(kekFile)
	if err != nil {
		b.Fatal(err)
	}
	temporalAddr, apiAddr, gwAddr, regAddr := testutil.FreeAddr(b), testutil.FreeAddr(b), testutil.FreeAddr(b), testutil.FreeAddr(b)
	common := []string{"-database-url", db, "-temporal-address", temporalAddr, "-task-queue", "load", "-kek-file", kekFile}
	p.common, p.temporalAddr = common, temporalAddr
	if out, err := exec.Command(p.bin, append([]string{"migrate"}, common...)...).CombinedOutput(); err != nil {
		b.Fatalf("outpost migrate: %v\n%s", err, out)
	}
	_, port, _ := net.SplitHostPort(temporalAddr)
	p.temporal = startProc(b, p.bin, "temporal", "-data-dir", b.TempDir(), "-temporal-port", port, "-temporal-ui-port", "-1")
	p.temporal.waitOutput(b, "temporal ready")
	p.gwURL = "http://" + gwAddr
	p.apiArgs = append(append([]string{"api", "-api-listen", apiAddr, "-gateway-listen", gwAddr, "-registry-listen", regAddr,
		"-data-dir", b.TempDir()}, loadGatewayFlags...), common...)
	p.startAPI(b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if p.store, err = store.Open(ctx, store.Config{DatabaseURL: db, Keys: &seal.Keyring{Current: kek}}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.store.Close() })
	return p
}

// startAPI starts `outpost api` and waits until its gateway listens.
func (p *plane) startAPI(b *testing.B) {
	p.api = startProc(b, p.bin, p.apiArgs...)
	p.api.waitOutput(b, "server=gateway")
}

// restartAPI stops `outpost api` with SIGTERM, as a deploy does, and starts
// a new one on the same addresses; it returns how long the gateway was down.
func (p *plane) restartAPI(b *testing.B) time.Duration {
	start := time.Now()
	p.api.stop()
	p.startAPI(b)
	return time.Since(start)
}

// env is a test env whose gateway is the plane's, with an org and an app of
// its own.
func (p *plane) env(b *testing.B) *env {
	org, _, app := storetest.NewOrgApp(b, p.store, "acme")
	tr := newTransport()
	b.Cleanup(tr.CloseIdleConnections)
	return &env{tb: b, s: p.store, url: p.gwURL, client: &http.Client{Transport: tr}, sql: countStatements(b, p.store.DB()),
		org: org, app: app}
}

// proc is a process the benchmark started; it is stopped when the benchmark
// ends.
type proc struct {
	cmd  *exec.Cmd
	out  *testutil.LockedBuffer
	done chan struct{}
}

func startProc(b *testing.B, bin string, args ...string) *proc {
	p := &proc{cmd: exec.Command(bin, args...), out: &testutil.LockedBuffer{}, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	b.Cleanup(func() {
		p.stop()
		if b.Failed() {
			b.Logf("%s output:\n%s", strings.Join(args[:1], " "), p.out.String())
		}
	})
	return p
}

// stop sends SIGTERM and waits for the exit (SIGKILL after 15 s).
func (p *proc) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *proc) waitOutput(b *testing.B, text string) {
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(p.out.String(), text) {
		select {
		case <-p.done:
			b.Fatalf("%s exited before saying %q:\n%s", p.cmd.Args[1], text, p.out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s did not say %q within 2 minutes:\n%s", p.cmd.Args[1], text, p.out.String())
		}
	}
}

// usage is the process's CPU time (user + system) and resident set, from
// /proc/<pid>/stat (fields 14, 15 and 24).
func (p *proc) usage(b *testing.B) (time.Duration, uint64) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	s := string(raw)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:]) // from field 3
	var n [3]uint64
	for k, field := range []int{14, 15, 24} {
		if n[k], err = strconv.ParseUint(fields[field-3], 10, 64); err != nil {
			b.Fatalf("/proc/%d/stat field %d: %v", p.cmd.Process.Pid, field, err)
		}
	}
	const tick = 10 * time.Millisecond // USER_HZ is 100 on Linux
	return time.Duration(n[0]+n[1]) * tick, n[2] * uint64(os.Getpagesize())
}

// dbStat is a counter of pg_stat_database for the store's database (the
// statistics may lag by a moment).
func dbStat(b *testing.B, e *env, column string) int64 {
	sqlDB, err := e.s.DB().DB()
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	q := `SELECT pg_stat_clear_snapshot() IS NULL, ` + column + ` FROM pg_stat_database WHERE datname = current_database()`
	if err := sqlDB.QueryRow(q).Scan(new(bool), &n); err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkLoadFaults runs 10 jobs for each of 1000 runners: each job is
// enqueued and awaited, and its lost attempts retried, by the activities
// RunJob calls (EnqueueJob, AwaitJob, RetryJob), in RunJob's loop (see
// faultRun.drive); a simulated runner claims it over the gateway,
// heartbeats and completes it. Meanwhile a random runner is killed four
// times a second (whatever it does stops at once, a long poll or a job mid-way; it
// comes back 2 s later with the same token) and, once half of the jobs are
// done, the gateway process is restarted. It reports the jobs lost (not
// succeeded), duplicated (two attempts running at once, or a success
// recorded twice) and stuck (not done after 15 minutes), and the time from
// the first enqueue until every job is done.
func BenchmarkLoadFaults(b *testing.B) {
	bin := buildOutpost(b)
	const n, perRunner = 1000, 10
	b.Run(fmt.Sprintf("runners=%d/jobs=%d", n, perRunner), func(b *testing.B) {
		raiseFileLimit(b, n+4096)
		// An await that ends at its 30 s timeout is logged by the store as a
		// failed query: keep those off the output.
		defer slog.SetDefault(slog.Default())
		slog.SetDefault(slog.New(slog.DiscardHandler))
		p := startPlane(b, bin)
		e := p.env(b)
		runners := registerRunners(b, e, n)
		r := &faultRun{e: e, runners: runners, active: map[string]int{}, completed: map[string]int{},
			acts: activities.NewJobs(e.s, time.Hour)}
		f := startFleet(b, e, runners, 0, r.run)
		f.downtime = 2 * time.Second
		defer f.stop()
		f.waitIdle(b)

		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		start := time.Now()
		stopKills := killEvery(f, 250*time.Millisecond)
		var outcomes sync.WaitGroup
		enqueued := make(chan error, 1)
		var enqueueTime time.Duration // set before enqueued is sent on
		go func() {
			err := parallel(16, n*perRunner, func(k int) error {
				ref, err := r.acts.EnqueueJob(ctx, contract.EnqueueJobInput{Key: fmt.Sprintf("load-%d", k),
					InstallID: runners[k%n].InstallID, Type: protocol.JobTypeNoop, Manifest: json.RawMessage(`{}`), TimeoutMS: 60_000})
				if err == nil {
					outcomes.Add(1)
					go func() { defer outcomes.Done(); r.drive(ctx, ref.JobID) }()
				}
				return err
			})
			enqueueTime = time.Since(start)
			enqueued <- err
		}()
		var downtime time.Duration
		for r.finished.Load() < n*perRunner/2 && ctx.Err() == nil {
			time.Sleep(100 * time.Millisecond)
		}
		if ctx.Err() == nil {
			done := r.finished.Load()
			downtime = p.restartAPI(b)
			b.Logf("gateway restarted after %d of %d jobs were done, %s after the first enqueue; down for %s",
				done, n*perRunner, time.Since(start).Round(time.Millisecond), downtime.Round(time.Millisecond))
		}
		if err := <-enqueued; err != nil {
			b.Fatal(err)
		}
		outcomes.Wait()
		stopKills()
		res := r.results(b, e, n*perRunner)
		f.mu.Lock()
		failed, firsts := len(f.errs), f.errs[:min(len(f.errs), 3)]
		f.mu.Unlock()
		b.ReportMetric(0, "ns/op")
		b.ReportMetric(float64(res.lost), "lost")
		b.ReportMetric(float64(res.duplicated), "duplicated")
		b.ReportMetric(float64(res.stuck), "stuck")
		b.ReportMetric(r.lastDone().Sub(start).Seconds(), "s-all-done")
		b.ReportMetric(float64(res.lostAttempts), "lost-attempts")
		b.ReportMetric(float64(f.kills.Load()), "kills")
		b.Logf("%d jobs enqueued by %s; %d runner kills (%d mid-job), %d lost attempts retried, %d calls answered stale, "+
			"%d runner requests retried after a failure, %d failed polls or job calls (the first: %v); the gateway was down %s",
			n*perRunner, enqueueTime.Round(time.Millisecond), f.kills.Load(), r.midJob.Load(), res.lostAttempts, r.stale.Load(),
			r.retries.Load(), failed, firsts, downtime.Round(time.Millisecond))
		if res.lost+res.duplicated+res.stuck > 0 {
			b.Errorf("lost %d, duplicated %d, stuck %d: %s", res.lost, res.duplicated, res.stuck, res.detail)
		}
	})
}

// killEvery kills a random runner every period until the returned function
// is called.
func killEvery(f *fleet, period time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for sleepCtx(ctx, period) {
			f.kill(rand.IntN(len(f.runners)))
		}
	}()
	return func() { cancel(); <-done }
}

// maxAttempts is RunJob's default JobPolicy.MaxAttempts.
const maxAttempts = 3

// drive is workflows.RunJob's loop for one enqueued job, without Temporal:
// await the job's end (an await that fails is retried, as Temporal retries
// the activity after its heartbeat timeout: here after 30 s), and queue a
// lost attempt again until maxAttempts were lost. It records the outcome.
func (r *faultRun) drive(ctx context.Context, jobID string) {
	for {
		actx, cancel := context.WithTimeout(ctx, 30*time.Second)
		res, err := r.acts.AwaitJob(actx, jobID, false)
		cancel()
		switch {
		case ctx.Err() != nil:
			r.record(jobID, "stuck")
			return
		case err != nil:
			continue
		case res.Status != status.JobLost || res.Attempt >= maxAttempts:
			r.record(jobID, string(res.Status))
			return
		}
		if err := r.acts.RetryJob(ctx, jobID, res.Attempt); err != nil && ctx.Err() == nil {
			r.record(jobID, "retry failed: "+err.Error())
			return
		}
	}
}

// record notes how a job ended, and when.
func (r *faultRun) record(jobID, outcome string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.outcomes == nil {
		r.outcomes = map[string]string{}
	}
	r.outcomes[jobID] = outcome
	r.last = time.Now()
	r.finished.Add(1)
}

func (r *faultRun) lastDone() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

// faultRun is what the simulated runners do with a command job, and what
// they saw.
type faultRun struct {
	e        *env
	runners  []runner
	acts     *activities.Jobs
	finished atomic.Int64 // jobs whose outcome is recorded
	mu       sync.Mutex
	outcomes map[string]string // per job: its final status, or stuck
	last     time.Time         // when the last outcome was recorded
	active   map[string]int    // attempts of each job running now
	overlap  int               // a job claimed while another attempt of it ran
	// completed counts the completions the gateway accepted, per job.
	completed map[string]int
	midJob    atomic.Int64 // runners killed while running a job
	stale     atomic.Int64 // heartbeats or completions answered 409 (the attempt was lost)
	retries   atomic.Int64 // requests sent again after a network error or 5xx
}

// run is runner i's job: one heartbeat, 50–300 ms of work, the completion. Each call is retried until it is answered (the
// gateway may be restarting), as a runner does.
func (r *faultRun) run(ctx context.Context, i int, j protocol.Job, _ time.Time) error {
	r.mu.Lock()
	r.active[j.ID]++
	if r.active[j.ID] > 1 {
		r.overlap++
	}
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.active[j.ID]--
		r.mu.Unlock()
		if ctx.Err() != nil {
			r.midJob.Add(1)
		}
	}()
	tok := r.runners[i].Token
	code, err := r.send(ctx, tok, protocol.PathJobHeartbeat, j.ID, protocol.JobHeartbeatRequest{Attempt: j.Attempt})
	if err != nil || code != http.StatusOK {
		return r.answered(code, err)
	}
	if !sleepCtx(ctx, time.Duration(50+rand.IntN(250))*time.Millisecond) {
		return ctx.Err()
	}
	code, err = r.send(ctx, tok, protocol.PathJobComplete, j.ID, protocol.CompleteRequest{Attempt: j.Attempt, Status: protocol.StatusSucceeded})
	if err == nil && code == http.StatusOK {
		r.mu.Lock()
		r.completed[j.ID]++
		r.mu.Unlock()
	}
	return r.answered(code, err)
}

// answered turns a job call's answer into the runner's next move: a stale
// attempt (409) is dropped, as a runner drops it; anything else unexpected
// is an error.
func (r *faultRun) answered(code int, err error) error {
	switch {
	case err != nil:
		return err
	case code == http.StatusConflict:
		r.stale.Add(1)
		return nil
	case code != http.StatusOK:
		return fmt.Errorf("job call: status %d", code)
	}
	return nil
}

// send posts a job call until it gets an answer other than a 5xx.
func (r *faultRun) send(ctx context.Context, tok, path, jobID string, body any) (int, error) {
	for {
		rep, err := r.e.tryPost(ctx, tok, jobPath(path, jobID), body)
		if err == nil && rep.status < 500 {
			return rep.status, nil
		}
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		r.retries.Add(1)
		sleepCtx(ctx, 200*time.Millisecond)
	}
}

// faultResults is what the store says happened to every job.
type faultResults struct {
	lost, duplicated, stuck, lostAttempts int
	detail                                string
}

func (r *faultRun) results(b *testing.B, e *env, want int) faultResults {
	var res faultResults
	q := func(sql string, dest any) {
		if err := e.s.DB().Raw(sql).Scan(dest).Error; err != nil {
			b.Fatal(err)
		}
	}
	var jobs, succeeded, succeededTwice int
	q(`SELECT count(*) FROM jobs`, &jobs)
	q(`SELECT count(*) FROM jobs WHERE status = '`+string(status.JobSucceeded)+`'`, &succeeded)
	q(`SELECT count(*) FROM (SELECT job_id FROM job_attempts WHERE status = '`+string(status.JobSucceeded)+`' GROUP BY job_id HAVING count(*) > 1) d`, &succeededTwice)
	q(`SELECT count(*) FROM job_attempts WHERE status = '`+string(status.JobLost)+`'`, &res.lostAttempts)
	r.mu.Lock()
	defer r.mu.Unlock()
	byOutcome := map[string]int{}
	for _, o := range r.outcomes {
		byOutcome[o]++
	}
	twice := 0
	for _, c := range r.completed {
		if c > 1 {
			twice++
		}
	}
	res.stuck = byOutcome["stuck"] + (jobs - len(r.outcomes))
	res.lost = (want - jobs) + (len(r.outcomes) - byOutcome[string(status.JobSucceeded)] - byOutcome["stuck"])
	res.duplicated = r.overlap + twice + succeededTwice
	res.detail = fmt.Sprintf("%d jobs of %d, %d succeeded in the store; outcomes %v; %d jobs claimed while another attempt ran, "+
		"%d completed twice (runners' view), %d with two successful attempts (store)", jobs, want, succeeded, byOutcome,
		r.overlap, twice, succeededTwice)
	b.Log(res.detail)
	return res
}
