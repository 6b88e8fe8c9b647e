package runner

import (
	"net/http"
	"testing"

	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/customer"
)

// A runner told it is a new version on trial takes only noop jobs and is
// not ready until one succeeded; then it takes every job and is ready.
func TestRunnerOnTrialTakesOnlyTheHealthJobUntilItRan(t *testing.T) {
	g := newTestGateway(t)
	g.onTrial = true
	addr := testutil.FreeAddr(t)
	g.update(func() { g.queue = append(g.queue, commandJob("job-work", "echo work")) })
	startRunner(t, g, Config{Token: g.runnerToken, HealthAddr: addr, Concurrency: 2, Policy: customer.Policy{DebugCommands: true}})
	ready := "http://" + addr + ReadyPath

	g.waitFor("claims", func() bool { return g.claims > 2 })
	g.mu.Lock()
	left := len(g.queue)
	g.mu.Unlock()
	if left != 1 {
		t.Fatalf("a runner on trial claimed the work job (%d jobs left queued)", left)
	}
	if code, h := getHealth(t, ready); code != http.StatusServiceUnavailable || h.Status != "checking" {
		t.Fatalf("ready on trial: %d %+v, want 503 checking", code, h)
	}

	if got := runOneJob(g, noopJob("job-health", nil)); got.Status != protocol.StatusSucceeded {
		t.Fatalf("the health job: %s %s", got.Status, got.Error)
	}
	g.waitFor("the work job's completion", func() bool { return len(g.completions["job-work"]) > 0 })
	if got := g.completion("job-work"); got.Status != protocol.StatusSucceeded {
		t.Errorf("the work job after the check: %s %s", got.Status, got.Error)
	}
	if code, h := getHealth(t, ready); code != http.StatusOK || h.Status != "ready" {
		t.Errorf("ready after the check: %d %+v, want 200 ready", code, h)
	}
}
