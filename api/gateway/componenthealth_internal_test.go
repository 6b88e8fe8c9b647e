package gateway

import (
	"testing"
	"time"

	"github.com/outpost-dev/outpost/protocol"
)

// A succeeded helm job completed here drops the runner's cached health spec
// (its next heartbeat reads the install's components again); another type of
// job, or a helm job that failed, keeps it.
func TestASucceededHelmJobDropsTheRunnersHealthSpec(t *testing.T) {
	g := New(Config{})
	cached := func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.state("run_1").health.spec != nil
	}
	g.mu.Lock()
	g.state("run_1").health = healthSpecState{spec: &protocol.HealthSpec{Version: "v1"}, at: time.Now()}
	g.mu.Unlock()
	for _, kept := range []struct{ typ, st string }{{protocol.JobTypeTerraform, "succeeded"}, {protocol.JobTypeHelm, "failed"}} {
		if g.helmJobDone("run_1", kept.typ, kept.st); !cached() {
			t.Fatalf("a %s job that %s dropped the spec", kept.typ, kept.st)
		}
	}
	if g.helmJobDone("run_1", protocol.JobTypeHelm, "succeeded"); cached() {
		t.Fatal("a succeeded helm job kept the runner's spec: its next heartbeat would not see the new release")
	}
}
