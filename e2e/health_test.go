package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/protocol"
)

// checkWebHealth waits until the install's health shows the example's web
// chart as its runner read it in the install's cluster: the cluster has no
// node, so no controller ever looks at the Deployment and it reads degraded
// (its rollout in progress), naming it; the installs list shows the same.
func (s *stack) checkWebHealth(inst string) {
	t := s.t
	t.Helper()
	var h wire.InstallHealth
	deadline := time.Now().Add(2 * time.Minute)
	for {
		s.do("GET", "/v1/installs/"+inst+"/health", nil, &h)
		if len(h.Components) > 0 && h.Health.State == protocol.HealthDegraded {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("install health after 2 minutes: %+v; want the web chart degraded", h)
		}
		time.Sleep(time.Second)
	}
	var web *wire.ComponentHealth
	for i, c := range h.Components {
		if c.Component == "web" {
			web = &h.Components[i]
		}
	}
	if web == nil || web.Object != "Deployment/demo/web" || !strings.Contains(web.Condition, "rollout in progress") ||
		h.Health.Component != "web" || len(h.Transitions) == 0 {
		t.Fatalf("install health: %+v; want web degraded by Deployment/demo/web, rollout in progress, with a transition", h)
	}
	var list wire.InstallList
	s.do("GET", "/v1/installs", nil, &list)
	for _, i := range list.Installs {
		if i.ID == inst && (i.Health == nil || i.Health.State != protocol.HealthDegraded) {
			t.Fatalf("installs list: %+v; want the install degraded", i.Health)
		}
	}
	t.Logf("install health: %s because %s %s: %s", h.Health.State, h.Health.Component, h.Health.Object, h.Health.Condition)
	s.checkHealthCLI(inst)
}

// checkHealthCLI shows the same with outpostctl health: the install's
// components and transitions, and the fleet filtered by label.
func (s *stack) checkHealthCLI(inst string) {
	t := s.t
	t.Helper()
	tt, ok := t.(*testing.T)
	if !ok {
		return // the CLI's helpers take a test, not a benchmark
	}
	c := newCLI(tt, s)
	out := c.ok("", "health", inst)
	if !strings.Contains(out, "degraded since") || !strings.Contains(out, "web  ") || !strings.Contains(out, "Deployment/demo/web: rollout in progress") ||
		!strings.Contains(out, "→degraded") {
		t.Errorf("outpostctl health %s:\n%s", inst, out)
	}
	var h wire.InstallHealth
	if c.json("", &h, "health", inst); h.Health.State != protocol.HealthDegraded {
		t.Errorf("outpostctl health %s -o json: %+v", inst, h)
	}
	if fleet := c.ok("", "health"); !strings.Contains(fleet, inst) || !strings.Contains(fleet, "degraded since") {
		t.Errorf("outpostctl health (the fleet):\n%s", fleet)
	}
	var none []wire.InstallListItem
	if c.json("", &none, "health", "--label", "tier=nothing-has-this"); len(none) != 0 {
		t.Errorf("outpostctl health --label tier=nothing-has-this: %+v; want none", none)
	}
	t.Logf("outpostctl health %s:\n%s", inst, out)
}
