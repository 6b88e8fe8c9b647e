package runner

import (
	"testing"

	"github.com/outpost-dev/outpost/protocol"
)

// A claim whose answer never came (the gateway claimed the job, then died)
// is told of by the next claim, with the jobs the runner holds; the gateway
// puts the job back and the runner runs it, as attempt 1.
func TestTheNextClaimTellsOfAClaimThatGotNoAnswer(t *testing.T) {
	g := newTestGateway(t)
	running := noopJob("job-running", nil)
	running.Manifest = []byte(`{"sleep_ms":3000}`)
	g.queue = []protocol.Job{running}
	stop, _, _ := startRunner(t, g, Config{Token: g.runnerToken, Concurrency: 2})
	g.waitFor("job-running claimed", func() bool { return len(g.queue) == 0 })
	g.update(func() { g.queue, g.dropClaims = append(g.queue, noopJob("job-unanswered", nil)), 1 })
	g.waitFor("the dropped claim's job completed", func() bool { return len(g.completions["job-unanswered"]) > 0 })
	if err := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := g.completion("job-unanswered"); got.Status != protocol.StatusSucceeded {
		t.Errorf("the job whose claim got no answer: %s (%s), want succeeded", got.Status, got.Error)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.unanswered) != 1 {
		t.Fatalf("claims told of %d unanswered ones, want 1: %+v", len(g.unanswered), g.unanswered)
	}
	u := g.unanswered[0]
	if u.FailedMSAgo < 0 || u.SentMSAgo < u.FailedMSAgo || u.Held["job-running"] != running.Attempt || len(u.Held) != 1 {
		t.Errorf("the claim told %+v; want the unanswered claim's times and job-running held", u)
	}
}
