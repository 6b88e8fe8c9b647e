package gateway

import (
	"context"
	"encoding/json"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// recordCustomer records what the runner reports of its customer's policy,
// pause and consents when it changed; a pause answers the runner's held
// claims at once and no job is handed to it until it resumes.
func (g *Gateway) recordCustomer(ctx context.Context, runnerID string, st *runnerState, req protocol.RunnerHeartbeatRequest) error {
	if req.Policy == nil && req.Customer == nil {
		return nil // an older runner: it reports no policy
	}
	state := protocol.CustomerState{}
	if req.Customer != nil {
		state = *req.Customer
	}
	key, _ := json.Marshal(struct {
		P *protocol.CustomerPolicy
		S protocol.CustomerState
	}{req.Policy, state})
	g.mu.Lock()
	known := st.customer == string(key)
	st.paused = state.PausedSince != nil
	if st.paused {
		wakeAll(st)
	}
	g.mu.Unlock()
	if known {
		return nil
	}
	if err := g.store.UpdateRunnerCustomer(ctx, runnerID, req.Policy, state); err != nil {
		return err
	}
	g.mu.Lock()
	st.customer = string(key)
	g.mu.Unlock()
	return nil
}

// origin is where a claimed job comes from, for the runner's policy and its
// customer's history; nil when it cannot be told (the job still goes out).
func (g *Gateway) origin(ctx context.Context, job *store.Job) *protocol.JobOrigin {
	o, err := g.store.JobOrigin(ctx, *job)
	if err != nil {
		g.log.Warn("gateway: the origin of a claimed job could not be read", "job", job.ID, "err", err)
		return nil
	}
	return &o
}
