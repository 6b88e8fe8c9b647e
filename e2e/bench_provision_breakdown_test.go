package e2e

// Where the time of a benchmarked provision goes: each job's phases, the
// share of the run they cover, and the aggregate report.

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/history/v1"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

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
