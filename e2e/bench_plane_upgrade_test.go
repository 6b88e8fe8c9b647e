package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// BenchmarkControlPlaneUpgrade rolls the chart's control plane (2 api and 2
// worker pods, on the local node) from one image to the other (v1 → v2 →
// v1 …), -benchtime times (4x: four upgrades), while work goes on: a job in the middle of a slow apply
// whose log `outpostctl logs --follow` follows, a step waiting for approval,
// and the install's runner (outside the cluster) taking a no-op job queued
// every 250 ms. It reports the time from `helm upgrade` to every pod ready on
// the new image (s/upgrade), the longest a queued job waited for the
// runner's long poll to claim it (claim-wait-max-s), the longest gap between
// two chunks of the followed log (log-gap-max-s; the runner sends a chunk
// every 250 ms) and the requests that failed (failed-requests: the runner's
// failed calls, the follower's errors). Then the operation ends and is
// checked as the upgrade test checks it: nothing lost, nothing twice.
//
//	go test ./e2e/ -run '^$' -bench ControlPlaneUpgrade -benchtime 4x -timeout 60m
func BenchmarkControlPlaneUpgrade(b *testing.B) {
	p := startChartPlane(b)
	p.pushImage(planeV2)
	gates := b.TempDir()
	s := p.replicas().app(b, upgradeAppDir(b, gates))
	f := startInFlight(b, s, outpostctl(b), "bench", gates)
	probe := startClaimProbe(b, p.store, s, f.inst)
	began := time.Now()
	var ready time.Duration
	upgrades := 0
	for i := 0; b.Loop(); i++ { // the setup above runs once, whatever -benchtime
		upgrades++
		v := []string{planeV2, planeV1}[i%2]
		start := time.Now()
		if _, err := p.helm.Upgrade(planeRelease, p.chart, p.values(v), 5*time.Minute); err != nil {
			b.Fatalf("helm upgrade to %s: %v", v, err)
		}
		p.waitRolledOut(v)
		ready = max(ready, time.Since(start))
		b.Logf("upgrade %d to %s: every pod ready in %s", i+1, v, time.Since(start).Round(time.Millisecond))
	}
	time.Sleep(2 * time.Second) // the probe's last jobs are claimed
	claimWait, jobs := probe.stop()
	logGap := f.follow.maxGap(began)
	var failed []protocol.ConnectionError
	for _, e := range s.installRunner(f.inst).ConnectionErrors {
		if e.At.After(began) {
			failed = append(failed, e)
		}
	}
	f.finish() // checks the follower ended without an error
	b.ReportMetric(ready.Seconds(), "s/upgrade")
	b.ReportMetric(claimWait.Seconds(), "claim-wait-max-s")
	b.ReportMetric(logGap.Seconds(), "log-gap-max-s")
	b.ReportMetric(float64(len(failed)), "failed-requests")
	b.Logf("%d upgrades: the slowest ready in %s; %d probe jobs, the longest claim wait %s; the longest gap in the followed log %s; the runner's failed calls: %v",
		upgrades, ready.Round(time.Millisecond), jobs, claimWait.Round(time.Millisecond), logGap.Round(time.Millisecond), failed)
}

// claimProbe queues a no-op job for an install's runner every 250 ms, and
// then measures how long each waited to be claimed.
type claimProbe struct {
	tb    testing.TB
	store *store.Store
	stopc chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex
	jobs  []string
}

func startClaimProbe(tb testing.TB, st *store.Store, s *stack, inst string) *claimProbe {
	tb.Helper()
	runner := s.installRunner(inst).ID
	m, _ := json.Marshal(protocol.NoopManifest{Lines: []string{"probe"}})
	p := &claimProbe{tb: tb, store: st, stopc: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-p.stopc:
				return
			case <-tick.C:
			}
			// The runner's, not the install's: the operation's jobs stay its steps' alone.
			j, _, err := st.EnqueueJob(context.Background(), store.JobSpec{Key: fmt.Sprintf("claim-probe/%d", i), OrgID: s.orgID,
				RunnerID: runner, Type: protocol.JobTypeNoop, Manifest: m, TimeoutMS: 60_000})
			if err != nil {
				tb.Errorf("queue a probe job: %v", err)
				return
			}
			p.mu.Lock()
			p.jobs = append(p.jobs, j.ID)
			p.mu.Unlock()
		}
	}()
	return p
}

// stop stops queueing, waits for every job to end, checks each succeeded on
// its first attempt and returns the longest wait from queued to claimed.
func (p *claimProbe) stop() (longest time.Duration, jobs int) {
	close(p.stopc)
	p.wg.Wait()
	ctx := context.Background()
	for _, id := range p.jobs {
		var j store.Job
		waitFor(p.tb, time.Minute, "probe job "+id+" to end", func() bool {
			var err error
			if j, err = p.store.GetJobByID(ctx, id); err != nil {
				p.tb.Fatal(err)
			}
			return status.JobTerminal(j.Status)
		})
		attempts, _, err := p.store.JobHistory(ctx, id)
		if err != nil {
			p.tb.Fatal(err)
		}
		if j.Status != status.JobSucceeded || len(attempts) != 1 {
			p.tb.Errorf("probe job %s: %s after %d attempts; want succeeded on its first", id, j.Status, len(attempts))
			continue
		}
		longest = max(longest, attempts[0].ClaimedAt.Sub(j.CreatedAt))
	}
	return longest, len(p.jobs)
}
