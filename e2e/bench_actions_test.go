package e2e

// BenchmarkActionDispatchToFirstLog measures how soon a manual action run
// shows output: from the POST that starts a run of a one-step action (an
// echo) to the first line of the step's job log readable through the API,
// on the real stack (API, ActionRun workflow, gateway, PostgreSQL) with a
// real outpost-runner online for a provisioned install.
//
//	go test -c -o /tmp/act-bench.test ./e2e && (cd e2e && /tmp/act-bench.test -test.run '^$' \
//	    -test.bench BenchmarkActionDispatchToFirstLog -test.benchtime 20x -test.v)
//
// docs/benchmarks-day-two.md ("Actions: a run's first log line") holds the figures.

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/api/wire"
)

// actBenchPoll is how often the benchmark reads the run and the log: the
// figures are at most this much late.
const actBenchPoll = 10 * time.Millisecond

// BenchmarkActionDispatchToFirstLog reports the p50 and p95 (ms) of POST →
// first log line of the step's job (first-log), and POST → the step's echo
// readable in that log (echo). Each iteration waits for its run to finish.
func BenchmarkActionDispatchToFirstLog(b *testing.B) {
	s := newStack(b, stackOptions{})
	s.startRunner()
	s.syncConfig("testdata/action-bench-app")
	s.provisioned(s.install.ID, 5*time.Minute)
	// Warm-up, untimed: the first workflow run and the first action job.
	s.actBenchRun()
	var first, echo []time.Duration
	b.ResetTimer()
	for b.Loop() {
		f, e := s.actBenchRun()
		first, echo = append(first, f), append(echo, e)
	}
	b.StopTimer()
	b.ReportMetric(0, "ns/op")
	for _, m := range []struct {
		name string
		ds   []time.Duration
	}{{"first-log", first}, {"echo", echo}} {
		p50, p95 := actBenchPercentile(m.ds, 50), actBenchPercentile(m.ds, 95)
		b.ReportMetric(float64(p50.Microseconds())/1000, m.name+"-p50-ms")
		b.ReportMetric(float64(p95.Microseconds())/1000, m.name+"-p95-ms")
	}
	b.Logf("%d runs; POST → first log line (ms): %s", len(first), actBenchMillis(first))
	b.Logf("POST → echoed line in the log (ms): %s", actBenchMillis(echo))
}

// actBenchRun starts a run of the hello action and returns the times from
// the POST to its step's first log line and to its echo being readable; it
// returns once the run has finished (succeeded).
func (s *stack) actBenchRun() (first, echo time.Duration) {
	s.t.Helper()
	start := time.Now()
	run := s.runAction("hello", nil)
	deadline := start.Add(time.Minute)
	jobID := ""
	for jobID == "" {
		var r wire.ActionRun
		if code := s.do("GET", "/v1/installs/"+s.install.ID+"/action-runs/"+run.ID, nil, &r); code != http.StatusOK || len(r.Steps) != 1 {
			s.t.Fatalf("get action run %s: %d %+v", run.ID, code, r)
		}
		if r.Steps[0].JobID != nil {
			jobID = *r.Steps[0].JobID
		} else {
			actBenchWait(s.t, deadline, "the step's job", run.ID)
		}
	}
	for echo == 0 {
		var page struct {
			Chunks []logChunk `json:"chunks"`
		}
		s.get("/v1/jobs/"+jobID+"/logs", &page)
		if len(page.Chunks) > 0 && first == 0 {
			first = time.Since(start)
		}
		if slices.ContainsFunc(page.Chunks, func(c logChunk) bool { return strings.Contains(c.Data, "hello from the action") }) {
			echo = time.Since(start)
		} else {
			actBenchWait(s.t, deadline, "the echo in job "+jobID+"'s log", run.ID)
		}
	}
	if done := s.waitActionRun(run.ID, time.Minute); done.Status != "succeeded" {
		s.t.Fatalf("run %+v, want succeeded", done)
	}
	return first, echo
}

func actBenchWait(tb testing.TB, deadline time.Time, what, runID string) {
	tb.Helper()
	if time.Now().After(deadline) {
		tb.Fatalf("action run %s: no %s within a minute", runID, what)
	}
	time.Sleep(actBenchPoll)
}

// actBenchPercentile is the nearest-rank percentile p of ds.
func actBenchPercentile(ds []time.Duration, p int) time.Duration {
	s := slices.Sorted(slices.Values(ds))
	if len(s) == 0 {
		return 0
	}
	rank := (p*len(s) + 99) / 100 // ceil(p/100 · n)
	return s[max(rank, 1)-1]
}

func actBenchMillis(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = strconv.FormatInt(d.Milliseconds(), 10)
	}
	return strings.Join(parts, " ")
}
