package gateway_test

// BenchmarkLoadCronRuns measures what scheduled action runs cost the control
// plane (issue 34): 1,000 installs of one app whose action tick runs every
// minute (one step), with `outpost worker`, `outpost api` (the gateway) and
// `outpost temporal` (the dev server, SQLite) each a process of its own, so
// that each one's CPU is read apart (/proc/<pid>/stat). Every install's
// runner is simulated by this process, as in bench_test.go: it claims the
// step's job over the gateway and completes it at once (succeeded), so a run
// costs the worker its workflow (started by the schedule) and its
// activities: RecordActionRun, LoadActionRun, EnqueueActionStepJob, AwaitJob
// until the runner's completion, FinishActionStep and FinishActionRun.
//
//	go test -run '^$' -bench BenchmarkLoadCronRuns -benchtime 1x -timeout 40m ./api/gateway/
//
// docs/benchmarks-day-two.md ("Cron runs at 1,000 installs") holds the figures.

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/outpost-dev/outpost/activities"
	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

// cronLoadMinutes is how many scheduled minutes the measured window holds.
const cronLoadMinutes = 3

// tickApp is an app with one action, run every minute, of one step.
var tickApp = storetest.MinimalApp(map[string]string{
	"actions/tick.toml": `[[triggers]]
type = "cron"
schedule = "* * * * *"
[[steps]]
name = "tick"
command = ["/bin/true"]
`,
})

// BenchmarkLoadCronRuns runs benchCronRuns with 100 installs (to compare)
// and 1,000.
func BenchmarkLoadCronRuns(b *testing.B) {
	bin := buildOutpost(b)
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("installs=%d", n), func(b *testing.B) { benchCronRuns(b, bin, n) })
	}
}

// benchCronRuns: after n installs, their runners and an idle baseline of
// the processes, it creates the n schedules; the first minute they all fire
// in is the warm-up. The window then covers the next cronLoadMinutes
// minutes' runs (from 5 s before the first of them): the runs recorded and
// finished per minute (n scheduled), and each process's CPU per finished
// run. Then it waits for every run of the window's minutes to end, reports
// those not recorded (never started, or not yet) and those that did not
// succeed, and logs what Temporal says 20 of the schedules did.
func benchCronRuns(b *testing.B, bin string, n int) {
	raiseFileLimit(b, uint64(n+4096))
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.DiscardHandler))
	p := startPlane(b, bin)
	e := p.env(b)
	syncApp(b, e, tickApp)
	runners := registerRunners(b, e, n)
	worker := startProc(b, bin, append([]string{"worker", "-gateway-url", p.gwURL}, p.common...)...)
	worker.waitOutput(b, "worker started")
	var completed atomic.Int64
	f := startFleet(b, e, runners, 5*time.Second, completeAtOnce(e, runners, &completed))
	defer f.stop()
	f.waitIdle(b)
	procs := map[string]*proc{"worker": worker, "api": p.api, "temporal": p.temporal}
	idle := cpuOver(b, procs, func() { time.Sleep(30 * time.Second) })

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	sc, created := createTickSchedules(ctx, b, p, runners)
	b.ReportMetric(float64(n)/created.Seconds(), "schedules/s")

	first := time.Now().Truncate(time.Minute).Add(2 * time.Minute) // after the warm-up minute
	from, to := first.Add(-5*time.Second), first.Add(cronLoadMinutes*time.Minute-5*time.Second)
	time.Sleep(time.Until(from))
	b.Logf("at the window's start, %d runs are unfinished", countRuns(b, e, `finished_at IS NULL`))
	used := cpuOver(b, procs, func() { time.Sleep(time.Until(to)) })
	finished := countRuns(b, e, `finished_at >= ? AND finished_at < ?`, from, to)
	recorded := countRuns(b, e, `created_at >= ? AND created_at < ?`, from, to)
	b.ReportMetric(float64(recorded)/cronLoadMinutes, "recorded-runs/min")
	b.ReportMetric(float64(finished)/cronLoadMinutes, "finished-runs/min")
	for _, name := range []string{"worker", "temporal", "api"} {
		b.ReportMetric(float64(used[name].Milliseconds())/float64(max(finished, 1)), name+"-cpu-ms/run")
		b.Logf("%s: %s CPU over the window, %s over the 30 s idle baseline before the schedules", name,
			used[name], idle[name])
	}
	fired, notSucceeded := windowOutcomes(ctx, b, e, first)
	b.ReportMetric(float64(n*cronLoadMinutes-fired), "not-recorded")
	b.ReportMetric(float64(notSucceeded), "not-succeeded")
	b.ReportMetric(0, "ns/op")
	b.Logf("%d step jobs completed by the runners in all; window %s–%s", completed.Load(),
		from.Format(time.TimeOnly), to.Format(time.TimeOnly))
	logScheduleInfo(ctx, b, sc, runners[:min(len(runners), 20)])
	f.check(b)
}

// syncApp stores files as the app's next config version.
func syncApp(b *testing.B, e *env, files fstest.MapFS) {
	archive, err := appconfig.ArchiveDir(files, ".")
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := e.s.SyncAppConfig(context.Background(), e.org.ID, e.app.ID, store.NewAppConfig{Archive: archive}); err != nil {
		b.Fatal(err)
	}
}

// completeAtOnce is a simulated runner's job: its completion, succeeded.
func completeAtOnce(e *env, runners []runner, completed *atomic.Int64) func(context.Context, int, protocol.Job, time.Time) error {
	return func(ctx context.Context, i int, j protocol.Job, _ time.Time) error {
		rep, err := e.tryPost(ctx, runners[i].Token, jobPath(protocol.PathJobComplete, j.ID),
			protocol.CompleteRequest{Attempt: j.Attempt, Status: protocol.StatusSucceeded})
		if err != nil {
			return err
		}
		if rep.status != http.StatusOK {
			return fmt.Errorf("complete job %s: status %d: %s", j.ID, rep.status, rep.body)
		}
		completed.Add(1)
		return nil
	}
}

// cpuOver runs wait and returns the CPU time each process used meanwhile.
func cpuOver(b *testing.B, procs map[string]*proc, wait func()) map[string]time.Duration {
	before := map[string]time.Duration{}
	for name, pr := range procs {
		before[name], _ = pr.usage(b)
	}
	wait()
	used := map[string]time.Duration{}
	for name, pr := range procs {
		after, _ := pr.usage(b)
		used[name] = after - before[name]
	}
	return used
}

// createTickSchedules gives every runner's install its schedule of tick,
// as ReconcileActionSchedules does after a provision, 8 at a time; it
// returns how long that took.
func createTickSchedules(ctx context.Context, b *testing.B, p *plane, runners []runner) (client.ScheduleClient, time.Duration) {
	c, err := client.Dial(client.Options{HostPort: p.temporalAddr, Namespace: "default",
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	sc := c.ScheduleClient()
	every := map[string][]string{"tick": {"* * * * *"}}
	start := time.Now()
	if err := parallel(8, len(runners), func(k int) error {
		return activities.ReconcileActionSchedules(ctx, sc, "load", runners[k].InstallID, every)
	}); err != nil {
		b.Fatal(err)
	}
	return sc, time.Since(start)
}

// logScheduleInfo logs what Temporal says the schedules of runners' installs
// did since their creation: actions taken, and those missed or skipped. A
// describe Temporal does not answer (it queries the schedule's workflow,
// which may be busy) is counted, not fatal.
func logScheduleInfo(ctx context.Context, b *testing.B, sc client.ScheduleClient, runners []runner) {
	var taken, missed, skipped, failed int
	var firstErr error
	for _, r := range runners {
		d, err := sc.GetHandle(ctx, contract.ActionScheduleID(r.InstallID, "tick")).Describe(ctx)
		if err != nil {
			failed++
			firstErr = cmp.Or(firstErr, err)
			continue
		}
		taken, missed, skipped = taken+d.Info.NumActions, missed+d.Info.NumActionsMissedCatchupWindow, skipped+d.Info.NumActionsSkippedOverlap
	}
	b.Logf("%d schedules described: %d actions taken since their creation, %d missed the catch-up window, %d skipped "+
		"(the previous run still running); %d describes failed (the first: %v)", len(runners)-failed, taken, missed, skipped,
		failed, firstErr)
}

// countRuns counts the action runs where cond holds.
func countRuns(b *testing.B, e *env, cond string, args ...any) int {
	var n int64
	if err := e.s.DB().Model(&store.ActionRun{}).Where(cond, args...).Count(&n).Error; err != nil {
		b.Fatal(err)
	}
	return int(n)
}

// windowOutcomes waits (up to 10 minutes) for every recorded run of the
// window's scheduled minutes (first and the cronLoadMinutes-1 after it:
// Temporal ends a scheduled workflow's ID with its minute, RFC 3339 in UTC,
// 20 characters) to end; it returns how many were recorded and how many did
// not succeed.
func windowOutcomes(ctx context.Context, b *testing.B, e *env, first time.Time) (fired, notSucceeded int) {
	var minutes []string
	for m := range cronLoadMinutes {
		minutes = append(minutes, first.Add(time.Duration(m)*time.Minute).UTC().Format(time.RFC3339))
	}
	const ofWindow = `right(workflow_id, 20) IN ?`
	deadline := time.Now().Add(10 * time.Minute)
	for countRuns(b, e, ofWindow+` AND finished_at IS NULL`, minutes) > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(5 * time.Second)
	}
	fired = countRuns(b, e, ofWindow, minutes)
	return fired, countRuns(b, e, ofWindow+` AND status <> ?`, minutes, string(status.JobSucceeded))
}
