package runner

import (
	"testing"

	"github.com/outpost-dev/outpost/protocol"
)

// A job the gateway claims just as the runner stops claiming (a shutdown
// here; a hand-over or a healthy candidate alike) reaches the runner and
// runs: the runner ends its round through the gateway rather than cancelling
// the claim it holds, which would leave such a job to its lease.
func TestAnEndingRoundRunsTheJobItsHeldClaimBrought(t *testing.T) {
	g := newTestGateway(t)
	g.intervals.ClaimWaitMS = 30_000 // the claim is held until the round ends
	var ended []string
	g.onEndRound = func(round string) {
		ended = append(ended, round)
		g.queue = append(g.queue, noopJob("job-at-the-end", nil)) // claimed as the round ends
	}
	stop, _, _ := startRunner(t, g, Config{Token: g.runnerToken, Concurrency: 1})
	g.waitFor("a held claim", func() bool { return g.polling > 0 })
	if err := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := g.completion("job-at-the-end"); got.Status != protocol.StatusSucceeded {
		t.Errorf("the job the ending round brought: %s (%s), want succeeded", got.Status, got.Error)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(ended) != 1 || len(g.queue) != 0 {
		t.Errorf("rounds ended %q, jobs left queued %d; want one round ended and nothing left", ended, len(g.queue))
	}
}
