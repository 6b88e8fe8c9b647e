package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// DefaultHealthInterval is how often runners read their components' health
// unless Config.HealthInterval says otherwise.
const DefaultHealthInterval = 60 * time.Second

// specMaxAge is how many health intervals a runner's spec is kept. An
// install's helm components change only with a helm job, so a succeeded one
// the runner completes here drops the spec at once (helmJobDone); one
// completed at another replica is seen once the spec is this old.
const specMaxAge = 10

// healthSpecState is a runner's health spec as the gateway last computed it.
type healthSpecState struct {
	spec *protocol.HealthSpec
	at   time.Time
}

// componentHealth is the heartbeat's part in component health
// (docs/architecture/health.md): it records the components whose health
// changed and hands the runner its spec when the runner's is not current.
func (g *Gateway) componentHealth(ctx context.Context, r store.Runner, st *runnerState, req protocol.RunnerHeartbeatRequest, resp *protocol.RunnerHeartbeatResponse) error {
	if r.InstallID == nil || req.HealthSpec == "" {
		return nil // the org's build runner deploys nothing; a runner that does not read health is sent nothing
	}
	spec, err := g.healthSpec(ctx, *r.InstallID, st)
	if err != nil {
		return err
	}
	var reports []protocol.ComponentHealth
	for _, h := range req.Health {
		if slices.ContainsFunc(spec.Components, func(t protocol.HealthTarget) bool { return t.Component == h.Component }) {
			h.State = validState(h.State)
			reports = append(reports, h)
		}
	}
	if err := g.store.RecordComponentHealth(ctx, r.OrgID, *r.InstallID, reports); err != nil {
		return err
	}
	if req.HealthSpec != spec.Version {
		resp.Health = spec
	}
	return nil
}

// healthSpec is the install's current spec, computed again once dropped or
// specMaxAge health intervals old; a new one forgets the health of components
// it no longer holds.
func (g *Gateway) healthSpec(ctx context.Context, installID string, st *runnerState) (*protocol.HealthSpec, error) {
	interval := g.cfg.HealthInterval
	g.mu.Lock()
	cached := st.health
	g.mu.Unlock()
	if cached.spec != nil && time.Since(cached.at) < specMaxAge*interval {
		return cached.spec, nil
	}
	targets, err := g.store.HealthTargets(ctx, installID)
	if err != nil {
		return nil, err
	}
	spec := &protocol.HealthSpec{IntervalMS: interval.Milliseconds(), Components: targets}
	raw, _ := json.Marshal(spec)
	sum := sha256.Sum256(raw)
	spec.Version = hex.EncodeToString(sum[:8])
	if cached.spec == nil || cached.spec.Version != spec.Version {
		keep := make([]string, len(targets))
		for i, t := range targets {
			keep[i] = t.Component
		}
		if err := g.store.ForgetComponentHealth(ctx, installID, keep); err != nil {
			return nil, err
		}
	}
	g.mu.Lock()
	st.health = healthSpecState{spec: spec, at: time.Now()}
	g.mu.Unlock()
	return spec, nil
}

// helmJobDone drops the runner's cached spec once a helm job of its succeeded:
// its next heartbeat reads the install's components again.
func (g *Gateway) helmJobDone(runnerID, jobType, st string) {
	if jobType != protocol.JobTypeHelm || st != string(status.JobSucceeded) {
		return
	}
	g.mu.Lock()
	g.state(runnerID).health = healthSpecState{}
	g.mu.Unlock()
}

// validState keeps a report's state to the known ones.
func validState(s string) string {
	switch s {
	case protocol.HealthHealthy, protocol.HealthDegraded, protocol.HealthUnhealthy:
		return s
	}
	return protocol.HealthUnknown
}
