package gateway_test

// Benchmarks of the runner gateway: simulated runners are goroutines making
// real HTTP long polls over loopback to a real gateway backed by a real
// PostgreSQL store (LISTEN/NOTIFY bus). Each runner is its own install with
// its own runner token. Every benchmark runs its own measurement loop and
// reports custom metrics, so run them once each:
//
//	go test ./api/gateway -run '^$' -bench . -skip '^BenchmarkLoad' -benchtime 1x -timeout 15m
//
// The BenchmarkLoad ones (10,000 runners; 1000 runners' jobs under runner
// kills and a gateway restart) take longer: go tool task load.
//
// docs/BENCHMARKS.md holds the figures and what they mean.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/api/gateway"
	"github.com/outpost-dev/outpost/internal/ctxsleep"
	"github.com/outpost-dev/outpost/protocol"
)

// production are the intervals runners get in production (the claim is held
// 25 s).
var production = gateway.DefaultIntervals

// BenchmarkClaimLatency measures enqueue→claim latency: from just before
// store.EnqueueJob to the moment the runner's claim response has arrived and
// been decoded, with 1 and with 1000 runners long-polling. Samples are taken
// one at a time, each for a random runner that is idle and waiting.
func BenchmarkClaimLatency(b *testing.B) {
	b.Run("runners=1", func(b *testing.B) {
		benchClaimLatency(b, newEnv(b, gateway.Config{Intervals: production}), 1, 0)
	})
	// Poll phases spread over one claim wait, as a fleet's would be: in the
	// background ~40 long polls a second end and are renewed.
	b.Run("runners=1000", func(b *testing.B) {
		benchClaimLatency(b, newEnv(b, gateway.Config{Intervals: production}), 1000, production.ClaimWait())
	})
}

func benchClaimLatency(b *testing.B, e *env, n int, ramp time.Duration) {
	arrivals := make(chan arrival, 1)
	f := startFleet(b, e, registerRunners(b, e, n), ramp, deliver(arrivals))
	defer f.stop()
	f.waitIdle(b)
	measureLatency(b, e, f, arrivals, 500)
}

// BenchmarkIdleRunners measures what 1000 idle runners cost: the process's
// CPU time, the SQL statements sent and the memory they hold, over one full
// cycle of the gateway's auth cache (two claim waits, 50 s) after every
// runner has polled once. The runners run in the same process, so the CPU
// and memory figures include their HTTP client side as well as the
// gateway's.
func BenchmarkIdleRunners(b *testing.B) {
	benchIdleRunners(b, 1000)
}

func benchIdleRunners(b *testing.B, n int) {
	e := newEnv(b, gateway.Config{Intervals: production})
	runners := registerRunners(b, e, n)
	mem0 := memoryInUse(b)
	f := startFleet(b, e, runners, production.ClaimWait(), func(context.Context, int, protocol.Job, time.Time) error {
		return errors.New("an idle runner got a job")
	})
	defer f.stop()
	f.waitIdle(b)

	window := 2 * production.ClaimWait()
	sql0, polls0, cpu0, t0 := e.sql.snapshot(), f.polls.Load(), processCPU(b), time.Now()
	time.Sleep(window)
	sql1, polls1, cpu1, t1 := e.sql.snapshot(), f.polls.Load(), processCPU(b), time.Now()
	mem1 := memoryInUse(b)
	f.check(b)

	mins := t1.Sub(t0).Minutes()
	d := sql1.since(sql0)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric((cpu1-cpu0).Seconds()/mins, "cpu-s/min")
	b.ReportMetric(float64(d.total())/mins, "sql/min")
	b.ReportMetric(float64(d.byKind[kindClaim])/mins, "claim-sql/min")
	b.ReportMetric(float64(d.byKind[kindAuth])/mins, "auth-sql/min")
	b.ReportMetric(float64(polls1-polls0)/mins, "polls/min")
	per := func(a, b uint64) float64 { return (float64(a) - float64(b)) / 1024 / float64(n) }
	b.ReportMetric(per(mem1.heap, mem0.heap), "heap-KiB/runner")
	b.ReportMetric(per(mem1.stacks, mem0.stacks), "stack-KiB/runner")
	b.ReportMetric(per(mem1.rss, mem0.rss), "rss-KiB/runner")
	b.ReportMetric(float64(mem1.goroutines-mem0.goroutines)/float64(n), "goroutines/runner")
	b.Logf("%d idle runners over %s: %d answered polls, CPU %s, SQL statements by kind %v; memory before the runners %+v, idle %+v",
		n, t1.Sub(t0).Round(time.Millisecond), polls1-polls0, cpu1-cpu0, d.byKind, mem0, mem1)
}

// BenchmarkNoopJobs measures no-op jobs per second through the gateway:
// producers enqueue N jobs spread over the runners while the runners claim
// each, heartbeat once, send one log chunk and complete it; the clock runs
// from the first enqueue to the last completion.
//
// It runs with the database pool as the store sets it up (16 connections)
// and with database/sql's defaults (unbounded, 2 idle), which the store used
// before: see docs/BENCHMARKS.md.
func BenchmarkNoopJobs(b *testing.B) {
	for _, pool := range pools {
		b.Run("runners=50/pool="+pool.name, func(b *testing.B) {
			benchNoopJobs(b, pool, 50, 2000)
		})
	}
}

// BenchmarkReconnectStorm measures 1000 runners whose first polls arrive at
// once, as after a gateway restart: the 5xx answers they get and the time
// until every one has had its first claim query answered.
func BenchmarkReconnectStorm(b *testing.B) {
	for _, pool := range pools {
		b.Run("runners=1000/pool="+pool.name, func(b *testing.B) {
			// The failures are counted below; keep their logs off the
			// output (the store logs through slog's default logger).
			defer slog.SetDefault(slog.Default())
			slog.SetDefault(slog.New(slog.DiscardHandler))
			e := newEnv(b, gateway.Config{Intervals: production, Logger: slog.New(slog.DiscardHandler)})
			runners := registerRunners(b, e, 1000)
			pool.apply(b, e)
			start := time.Now()
			f := startFleet(b, e, runners, 0, func(context.Context, int, protocol.Job, time.Time) error {
				return errors.New("an idle runner got a job")
			})
			defer f.stop()
			for _, r := range runners {
				waitFor(b, "every runner's first claim", func() bool { return e.sql.claims(r.ID) > 0 })
			}
			elapsed := time.Since(start)
			f.mu.Lock()
			failures := len(f.errs)
			f.mu.Unlock()
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(float64(failures), "failed-polls")
			b.ReportMetric(elapsed.Seconds(), "s-all-served")
		})
	}
}

// poolSetting sets the store's database/sql pool up; shipped leaves it as
// store.Open set it up.
type poolSetting struct {
	name    string
	shipped bool
}

var pools = []poolSetting{{name: "shipped", shipped: true}, {name: "sql-defaults"}}

func (p poolSetting) apply(b *testing.B, e *env) {
	if p.shipped {
		return
	}
	sqlDB, err := e.s.DB().DB()
	if err != nil {
		b.Fatal(err)
	}
	sqlDB.SetMaxOpenConns(0) // database/sql's defaults: no limit, 2 idle
	sqlDB.SetMaxIdleConns(2)
}

func benchNoopJobs(b *testing.B, pool poolSetting, nRunners, nJobs int) {
	e := newEnv(b, gateway.Config{Intervals: production})
	runners := registerRunners(b, e, nRunners)
	pool.apply(b, e)
	var completed atomic.Int64
	allDone := make(chan time.Time, 1)
	f := startFleet(b, e, runners, 0, func(ctx context.Context, i int, j protocol.Job, _ time.Time) error {
		if err := runNoop(ctx, e, runners[i].Token, j); err != nil {
			return err
		}
		if completed.Add(1) == int64(nJobs) {
			allDone <- time.Now()
		}
		return nil
	})
	defer f.stop()
	f.waitIdle(b)

	const producers = 8
	sql0, conns0 := e.sql.snapshot(), sessions(b, e)
	start := time.Now()
	err := parallel(producers, nJobs, func(k int) error {
		_, _, err := e.s.EnqueueJob(context.Background(), e.spec(runners[k%nRunners], fmt.Sprintf("noop-%d", k)))
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	var end time.Time
	select {
	case end = <-allDone:
	case <-time.After(5 * time.Minute):
		b.Fatalf("only %d of %d jobs completed", completed.Load(), nJobs)
	}
	f.check(b)
	d := e.sql.snapshot().since(sql0)
	elapsed := end.Sub(start)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(nJobs)/elapsed.Seconds(), "jobs/s")
	b.ReportMetric(float64(d.total())/float64(nJobs), "sql/job")
	b.ReportMetric(float64(sessions(b, e)-conns0)/float64(nJobs), "db-conns/job")
	b.Logf("%d jobs on %d runners in %s; SQL statements by kind %v", nJobs, nRunners, elapsed.Round(time.Millisecond), d.byKind)
}

// runNoop is what a runner does with a noop job, minus the work: one
// heartbeat, one log chunk, completion.
func runNoop(ctx context.Context, e *env, tok string, j protocol.Job) error {
	steps := []struct {
		path string
		body any
	}{
		{protocol.PathJobHeartbeat, protocol.JobHeartbeatRequest{Attempt: j.Attempt}},
		{protocol.PathJobLogs, protocol.LogsRequest{Attempt: j.Attempt, Chunks: []protocol.LogChunk{
			{Seq: 1, Stream: protocol.StreamStdout, Data: "hello\n", Time: time.Now()}}}},
		{protocol.PathJobComplete, protocol.CompleteRequest{Attempt: j.Attempt, Status: protocol.StatusSucceeded, LastSeq: 1}},
	}
	for _, s := range steps {
		rep, err := e.tryPost(ctx, tok, jobPath(s.path, j.ID), s.body)
		if err != nil {
			return err
		}
		if rep.status != http.StatusOK {
			return fmt.Errorf("%s: status %d: %s", s.path, rep.status, rep.body)
		}
	}
	return nil
}

// deliver is an onJob that hands each job over with its arrival time.
func deliver(arrivals chan<- arrival) func(context.Context, int, protocol.Job, time.Time) error {
	return func(_ context.Context, i int, j protocol.Job, at time.Time) error {
		arrivals <- arrival{i, j, at}
		return nil
	}
}

// measureLatency takes samples one at a time and reports percentiles.
func measureLatency(b *testing.B, e *env, f *fleet, arrivals <-chan arrival, samples int) {
	lat := make([]time.Duration, 0, samples)
	ctx := context.Background()
	for k := range samples {
		i := rand.IntN(len(f.runners))
		r := f.runners[i]
		before := f.pollCount(i)
		t0 := time.Now()
		job, _, err := e.s.EnqueueJob(ctx, e.spec(r, fmt.Sprintf("lat-%d", k)))
		if err != nil {
			b.Fatal(err)
		}
		var a arrival
		select {
		case a = <-arrivals:
		case <-time.After(time.Minute):
			f.check(b)
			b.Fatalf("job %s for runner %d not claimed within a minute", job.ID, i)
		}
		if a.runner != i || a.job.ID != job.ID {
			b.Fatalf("runner %d claimed %s; want runner %d with %s", a.runner, a.job.ID, i, job.ID)
		}
		lat = append(lat, a.at.Sub(t0))
		f.waitNextPoll(b, i, before)
	}
	f.check(b)
	slices.Sort(lat)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(ms(percentile(lat, 50)), "p50-ms")
	b.ReportMetric(ms(percentile(lat, 90)), "p90-ms")
	b.ReportMetric(ms(percentile(lat, 99)), "p99-ms")
	b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// sessions is how many connections PostgreSQL has accepted to the store's
// database so far.
func sessions(b *testing.B, e *env) int64 { return dbStat(b, e, "sessions") }

// processCPU is the user+system CPU time this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// raiseFileLimit raises this process's open-file limit (RLIMIT_NOFILE) to
// need. Go already raises the soft limit to the hard one at start; past the
// hard limit it takes CAP_SYS_RESOURCE, and without it the benchmark is
// skipped.
func raiseFileLimit(b *testing.B, need uint64) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		b.Fatal(err)
	}
	if lim.Cur >= need {
		b.Logf("RLIMIT_NOFILE is %d (hard %d), enough for the %d needed", lim.Cur, lim.Max, need)
		return
	}
	was := lim
	lim.Cur, lim.Max = need, max(lim.Max, need)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		b.Skipf("%d open files needed; the limit is %d (hard %d) and raising it failed: %v", need, was.Cur, was.Max, err)
	}
	b.Logf("raised RLIMIT_NOFILE from %d (hard %d) to %d", was.Cur, was.Max, need)
}

// memUse is what the process holds at one moment.
type memUse struct {
	heap, stacks, rss uint64 // bytes: heap spans in use, goroutine stacks, resident set
	goroutines        int
}

// memoryInUse collects garbage, then reads the Go runtime's figures and the
// resident set size from /proc/self/status.
func memoryInUse(b *testing.B) memUse {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	var rssKiB uint64
	for line := range strings.Lines(string(raw)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			rssKiB, err = strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				b.Fatalf("VmRSS %q: %v", rest, err)
			}
		}
	}
	return memUse{heap: ms.HeapInuse, stacks: ms.StackInuse, rss: rssKiB << 10, goroutines: runtime.NumGoroutine()}
}

// registerRunners creates n installs and registers their runners over HTTP,
// a few at a time.
func registerRunners(b *testing.B, e *env, n int) []runner {
	b.Helper()
	out := make([]runner, n)
	err := parallel(8, n, func(i int) error {
		var err error
		out[i], err = e.tryNewRunner(fmt.Sprintf("customer-%d", i))
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// parallel calls fn(k) for every k in [0, n) on workers goroutines; a
// worker stops at its first error, which parallel returns.
func parallel(workers, n int, fn func(k int) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := int(next.Add(1)) - 1; k < n; k = int(next.Add(1)) - 1 {
				if err := fn(k); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

type arrival struct {
	runner int
	job    protocol.Job
	at     time.Time
}

// fleet is a set of simulated runners, each a goroutine that long-polls
// without pause and hands every job it gets to onJob. A runner can be
// killed (kill): whatever it was doing stops at once, its request cut, and it
// starts again, as a new process with the same token, after downtime.
type fleet struct {
	e        *env
	runners  []runner
	onJob    func(ctx context.Context, runner int, job protocol.Job, at time.Time) error
	downtime time.Duration                        // how long a killed runner stays down
	polls    atomic.Int64                         // answered polls
	sent     []atomic.Int64                       // polls sent, per runner
	lives    []atomic.Pointer[context.CancelFunc] // ends each runner's current life
	kills    atomic.Int64
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	mu       sync.Mutex
	errs     []error
}

// startFleet starts the runners' poll loops, the i-th after ramp*i/n, so the
// first polls don't all hit the database at once.
func startFleet(b *testing.B, e *env, runners []runner, ramp time.Duration,
	onJob func(ctx context.Context, runner int, job protocol.Job, at time.Time) error) *fleet {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fleet{e: e, runners: runners, onJob: onJob, cancel: cancel, downtime: time.Second,
		sent: make([]atomic.Int64, len(runners)), lives: make([]atomic.Pointer[context.CancelFunc], len(runners))}
	b.Cleanup(f.stop)
	for i := range runners {
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			if !sleepCtx(ctx, ramp*time.Duration(i)/time.Duration(len(runners))) {
				return
			}
			for ctx.Err() == nil {
				life, die := context.WithCancel(ctx)
				f.lives[i].Store(&die)
				f.live(life, i)
				die()
				sleepCtx(ctx, f.downtime) // killed: down for a while, then a new process
			}
		}()
	}
	return f
}

// live is one life of runner i: it polls until ctx ends.
func (f *fleet) live(ctx context.Context, i int) {
	for ctx.Err() == nil {
		f.sent[i].Add(1)
		j, err := f.e.claim(ctx, f.runners[i].Token)
		if err == nil && j != nil {
			err = f.onJob(ctx, i, *j, time.Now())
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			f.fail(err)
			sleepCtx(ctx, 100*time.Millisecond) // a real runner backs off too
			continue
		}
		f.polls.Add(1)
	}
}

// kill ends runner i's current life at once (it starts again after
// downtime).
func (f *fleet) kill(i int) {
	if die := f.lives[i].Load(); die != nil {
		(*die)()
		f.kills.Add(1)
	}
}

// sleepCtx sleeps for d unless ctx ends first; it reports whether it slept.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	return ctxsleep.Sleep(ctx, d) == nil
}

func (f *fleet) fail(err error) {
	f.mu.Lock()
	f.errs = append(f.errs, err)
	f.mu.Unlock()
}

// check fails the benchmark if any runner saw an error.
func (f *fleet) check(b *testing.B) {
	b.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.errs) > 0 {
		b.Fatalf("%d runner errors, the first: %v", len(f.errs), errors.Join(f.errs[:min(len(f.errs), 3)]...))
	}
}

// pollCount is how many claim queries the gateway ran for runner i when it
// runs in this process (its SQL is counted), else how many polls the runner
// sent.
func (f *fleet) pollCount(i int) int {
	if f.e.srv == nil {
		return int(f.sent[i].Load())
	}
	return f.e.sql.claims(f.runners[i].ID)
}

// waitNextPoll waits until runner i, which had made before polls (by
// pollCount) when it got a job, polls again and waits.
func (f *fleet) waitNextPoll(b *testing.B, i, before int) {
	if f.e.srv == nil {
		waitFor(b, "the runner to poll again", func() bool { return f.pollCount(i) >= before+1 })
		time.Sleep(20 * time.Millisecond) // for the gateway to receive it and ask the database
		return
	}
	// Its new poll asks the database once (the notification made "no
	// work" stale): one query for the claim that got the job, one for it.
	waitFor(b, "the runner to poll again", func() bool { return f.pollCount(i) >= before+2 })
}

// waitIdle returns once every runner has made its first claim query (so it
// now waits without asking the database); with the gateway in a process of
// its own, once every runner has sent its first poll, and a second more.
func (f *fleet) waitIdle(b *testing.B) {
	b.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for i := range f.runners {
		for f.pollCount(i) == 0 {
			if time.Now().After(deadline) {
				f.check(b)
				b.Fatal("runners did not all poll within 2 minutes")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	time.Sleep(100 * time.Millisecond)
	if f.e.srv == nil {
		time.Sleep(time.Second)
	}
	f.check(b)
}

func (f *fleet) stop() {
	f.cancel()
	f.wg.Wait()
}
