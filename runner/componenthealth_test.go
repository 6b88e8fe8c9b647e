package runner

import (
	"encoding/json"
	"testing"

	"github.com/outpost-dev/outpost/protocol"
)

// A heartbeat carries only the components whose health changed since the
// gateway accepted them; one that fails is sent again; a new spec makes
// everything new. An unchanged heartbeat costs the spec's version only.
func TestHeartbeatsCarryOnlyChangedHealth(t *testing.T) {
	h := newComponentHealth()
	var req protocol.RunnerHeartbeatRequest
	h.request(&req)
	if req.HealthSpec != protocol.HealthSpecNone || req.Health != nil {
		t.Fatalf("before a spec: %+v; want health_spec none", req)
	}
	spec := &protocol.HealthSpec{Version: "0123456789abcdef", IntervalMS: 60_000,
		Components: []protocol.HealthTarget{{Component: "web"}, {Component: "db"}}}
	h.answered(req, protocol.RunnerHeartbeatResponse{Health: spec})
	web := protocol.ComponentHealth{Component: "web", State: protocol.HealthHealthy}
	db := protocol.ComponentHealth{Component: "db", State: protocol.HealthDegraded, Object: "StatefulSet/ns/db", Condition: "1 of 2 replicas ready, 2 updated"}
	h.took(spec, []protocol.ComponentHealth{web, db})

	send := func() protocol.RunnerHeartbeatRequest {
		var r protocol.RunnerHeartbeatRequest
		h.request(&r)
		return r
	}
	first := send() // fails: not answered
	if again := send(); len(again.Health) != 2 || len(first.Health) != 2 {
		t.Fatalf("first report, then again after it failed: %+v, %+v; want both components twice", first.Health, again.Health)
	}
	h.answered(first, protocol.RunnerHeartbeatResponse{})
	idle := send()
	if idle.Health != nil || idle.HealthSpec != spec.Version {
		t.Fatalf("nothing changed: %+v; want only the spec's version", idle)
	}
	web.State, web.Object, web.Condition = protocol.HealthUnhealthy, "Deployment/ns/web", "Available=False"
	h.took(spec, []protocol.ComponentHealth{web, db})
	if r := send(); len(r.Health) != 1 || r.Health[0] != web {
		t.Fatalf("web changed: %+v; want web only", r.Health)
	}

	// Bytes of an unchanged heartbeat, before health and with it.
	before, _ := json.Marshal(protocol.RunnerHeartbeatRequest{Version: "v1.2.3", RunningJobs: 0})
	after, _ := json.Marshal(protocol.RunnerHeartbeatRequest{Version: "v1.2.3", RunningJobs: 0, HealthSpec: idle.HealthSpec})
	t.Logf("an unchanged heartbeat: %d bytes before component health, %d with it (+%d)", len(before), len(after), len(after)-len(before))
	if len(after)-len(before) > 40 {
		t.Errorf("an unchanged heartbeat grew by %d bytes", len(after)-len(before))
	}

	h.answered(idle, protocol.RunnerHeartbeatResponse{Health: &protocol.HealthSpec{Version: "fedcba9876543210"}})
	if r := send(); r.HealthSpec != "fedcba9876543210" || r.Health != nil {
		t.Fatalf("after a new spec, before its reading: %+v", r)
	}
}
