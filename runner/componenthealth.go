package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/outpost-dev/outpost/protocol"
)

// Component health (docs/architecture/health.md): the gateway's heartbeat
// answer says what to check (protocol.HealthSpec); every IntervalMS the
// runner reads it with "outpost-runner-helm health" (kube's client stays out
// of the runner's own binary) and its next heartbeat carries the components
// whose health differs from what the gateway last accepted. An unchanged
// heartbeat carries only the spec's version.

// healthReadTimeout bounds one reading of every component.
const healthReadTimeout = 2 * time.Minute

// componentHealth is the runner's side of component health.
type componentHealth struct {
	mu       sync.Mutex
	spec     *protocol.HealthSpec
	read     map[string]protocol.ComponentHealth // the latest reading
	reported map[string]protocol.ComponentHealth // what the gateway accepted
	wake     chan struct{}                       // a new spec: read now
}

func newComponentHealth() *componentHealth {
	return &componentHealth{wake: make(chan struct{}, 1)}
}

// request fills a heartbeat: the spec's version and the changed components.
func (h *componentHealth) request(req *protocol.RunnerHeartbeatRequest) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.spec == nil {
		req.HealthSpec = protocol.HealthSpecNone
		return
	}
	req.HealthSpec = h.spec.Version
	for _, c := range sortedKeys(h.read) {
		if h.read[c] != h.reported[c] {
			req.Health = append(req.Health, h.read[c])
		}
	}
}

// answered takes a heartbeat's answer: what it carried was accepted, and a
// new spec replaces the old one (everything is then read and sent anew).
func (h *componentHealth) answered(req protocol.RunnerHeartbeatRequest, resp protocol.RunnerHeartbeatResponse) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.spec != nil && req.HealthSpec == h.spec.Version {
		for _, c := range req.Health {
			h.reported[c.Component] = c
		}
	}
	if resp.Health == nil || (h.spec != nil && resp.Health.Version == h.spec.Version) {
		return
	}
	h.spec = resp.Health
	h.read, h.reported = map[string]protocol.ComponentHealth{}, map[string]protocol.ComponentHealth{}
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// current is the spec to read, nil before the first.
func (h *componentHealth) current() *protocol.HealthSpec {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.spec
}

// took records a reading of spec (dropped when the spec changed meanwhile).
func (h *componentHealth) took(spec *protocol.HealthSpec, got []protocol.ComponentHealth) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.spec != spec {
		return
	}
	for _, c := range got {
		h.read[c.Component] = c
	}
}

// readComponentHealth reads the spec's components every interval until ctx
// ends; a new spec is read at once.
func (r *Runner) readComponentHealth(ctx context.Context) {
	for {
		wait := time.Hour
		if spec := r.health.current(); spec != nil && len(spec.Components) > 0 {
			readCtx, cancel := context.WithTimeout(ctx, healthReadTimeout)
			got, err := r.readHealth(readCtx, spec.Components)
			cancel()
			if err != nil {
				got = unknownHealth(spec.Components, err.Error())
			}
			r.health.took(spec, got)
			wait = time.Duration(spec.IntervalMS) * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return
		case <-r.health.wake:
		case <-time.After(max(wait, time.Second)):
		}
	}
}

// readHealth runs "outpost-runner-helm health" on the targets, handed over
// on stdin (they hold kubeconfigs).
func (r *Runner) readHealth(ctx context.Context, targets []protocol.HealthTarget) ([]protocol.ComponentHealth, error) {
	bin := r.cfg.jobExecutables[protocol.JobTypeHelm]
	switch {
	case bin == "":
		return nil, fmt.Errorf("this runner has no %s to read the cluster with", HelmJobBinary)
	case !slices.Contains(r.capabilities, protocol.JobTypeHelm):
		return nil, fmt.Errorf("this runner's customer policy does not allow helm jobs: it does not read the cluster")
	}
	in, err := json.Marshal(targets)
	if err != nil {
		return nil, err
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "health")
	cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Environ(), bytes.NewReader(in), &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("reading health: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var got []protocol.ComponentHealth
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		return nil, fmt.Errorf("reading health: %w", err)
	}
	return got, nil
}

// unknownHealth is every target unknown, for why.
func unknownHealth(targets []protocol.HealthTarget, why string) []protocol.ComponentHealth {
	out := make([]protocol.ComponentHealth, len(targets))
	for i, t := range targets {
		out[i] = protocol.ComponentHealth{Component: t.Component, State: protocol.HealthUnknown, Condition: why}
	}
	return out
}

func sortedKeys(m map[string]protocol.ComponentHealth) []string {
	return slices.Sorted(maps.Keys(m))
}
