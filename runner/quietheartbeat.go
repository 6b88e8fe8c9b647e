package runner

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/outpost-dev/outpost/protocol"
)

// Quiet heartbeats (docs/architecture/runner.md, "Heartbeats"): every
// RunnerHeartbeat the runner looks at what its heartbeat would say, and sends
// it only when that differs from what the gateway last accepted, carries a
// report (health changed, failed calls, an update's end, a trial's
// question), or QuietHeartbeat has passed since the last one. An idle fleet
// then costs the gateway its long polls, not a heartbeat each per runner
// every 30 s; the claims keep the runner seen.

// lastBeat is what the gateway last accepted and when.
type lastBeat struct {
	mu  sync.Mutex
	key string
	at  time.Time
}

// due reports whether req must be sent now: it says something new, or the
// quiet interval (0: none) has passed since the last accepted heartbeat.
func (b *lastBeat) due(req protocol.RunnerHeartbeatRequest, quiet time.Duration, reports bool) bool {
	if quiet <= 0 || reports || len(req.Health) > 0 || req.Update != nil || req.AskHealthCheck || req.EndRound != "" {
		return true
	}
	key := beatKey(req)
	b.mu.Lock()
	defer b.mu.Unlock()
	return key != b.key || time.Since(b.at) >= quiet
}

// accepted records req as the gateway's latest.
func (b *lastBeat) accepted(req protocol.RunnerHeartbeatRequest) {
	key := beatKey(req)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.key, b.at = key, time.Now()
}

// beatKey is what a heartbeat says of the runner, without its reports.
func beatKey(req protocol.RunnerHeartbeatRequest) string {
	req.Health, req.ConnectionErrors, req.Update, req.AskHealthCheck, req.EndRound = nil, nil, nil, false, ""
	raw, _ := json.Marshal(req)
	return string(raw)
}
