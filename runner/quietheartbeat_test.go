package runner

import (
	"testing"
	"time"
)

// An idle runner sends a heartbeat every QuietHeartbeat, not every
// RunnerHeartbeat; a change (here a job running) goes at the next
// RunnerHeartbeat; a gateway that sends no QuietHeartbeat gets one every
// RunnerHeartbeat.
func TestQuietHeartbeatsSendOnlyNews(t *testing.T) {
	g := newTestGateway(t)
	g.intervals.RunnerHeartbeatMS, g.intervals.QuietHeartbeatMS = 100, 3_000
	startRunner(t, g, Config{Token: g.runnerToken})
	g.waitFor("the first heartbeat", func() bool { return g.heartbeats >= 1 })
	time.Sleep(1500 * time.Millisecond) // 15 heartbeat intervals
	g.mu.Lock()
	idle := g.heartbeats
	g.queue = append(g.queue, noopJob("job-1", nil))
	g.broadcast()
	g.mu.Unlock()
	if idle > 2 {
		t.Errorf("an idle runner sent %d heartbeats in 1.5 s with a 3 s quiet interval, want at most 2", idle)
	}
	g.waitFor("a heartbeat saying a job runs, or ran", func() bool { return g.heartbeats > idle })

	g2 := newTestGateway(t)
	g2.intervals.RunnerHeartbeatMS = 100 // no QuietHeartbeat: an older gateway
	startRunner(t, g2, Config{Token: g2.runnerToken})
	g2.waitFor("the first heartbeat", func() bool { return g2.heartbeats >= 1 })
	time.Sleep(time.Second)
	g2.mu.Lock()
	defer g2.mu.Unlock()
	if g2.heartbeats < 5 {
		t.Errorf("with no quiet interval the runner sent %d heartbeats in 1 s at a 100 ms interval, want one each", g2.heartbeats)
	}
}
