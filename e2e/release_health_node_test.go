package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/localcluster"
	"github.com/outpost-dev/outpost/localcluster/localclustertest"
	"github.com/outpost-dev/outpost/protocol"
)

// A health-gated release on a cluster whose node runs the pods: two
// installs run version 1 of a chart (a Deployment of the node's pause
// image): cust-1 on the node's cluster (ready), cust-2 on a cluster of its
// own without a node (a release's namespace and name are the same for every
// install: two installs cannot share a cluster). Version 2 adds a readiness probe that never passes; its
// release (`outpostctl releases create --soak 45s --on-unhealthy rollback`,
// one install per batch) deploys cust-1, whose Deployment keeps the old pod
// beside a new one never ready: at the end of the soak cust-1 is not
// healthy, its batch is rolled back to version 1, and the release halts
// naming the install, component, Deployment and condition. The next batches
// are untouched; cancelled, they are skipped.
func TestReleaseHealthGateOnANode(t *testing.T) {
	cluster := localclustertest.StartWithNode(t, localcluster.NodeOptions{})
	s := newStack(t, stackOptions{})
	dir := t.TempDir()
	copyDir(t, "testdata/health-gate-app", dir)
	s.syncConfig(dir)
	insts := map[string]string{}
	for name, c := range map[string]*localcluster.Cluster{"cust-1": cluster, "cust-2": localclustertest.Start(t)} {
		insts[name], _ = s.newInstall(name, map[string]any{"name": "kubeconfig", "value": string(c.Kubeconfig()), "sensitive": true})
	}
	s.provisionAll(insts)
	s.waitHealthState(insts["cust-1"], protocol.HealthHealthy, 3*time.Minute)

	copyFile(t, "testdata/health-gate-v2/deployment.yaml", filepath.Join(dir, "charts", "web", "templates", "deployment.yaml"))
	s.syncConfig(dir)
	c := newCLI(t, s)
	c.fails(1, "on_unhealthy", "releases", "create", "--app", "demo", "--all", "--soak", "45s", "--on-unhealthy", "later")
	c.fails(1, "soak", "releases", "create", "--app", "demo", "--all", "--soak", "a while")
	began := time.Now()
	c.ok("", "releases", "create", "--app", "demo", "--install", "cust-1,cust-2", "--batch-size", "1", "--soak", "45s", "--on-unhealthy", "rollback")
	r := s.waitRelease(s.latestRelease().ID, "halted")
	t.Logf("halted after %s: %s", time.Since(began).Round(time.Second), r.Error)
	for _, want := range []string{"install cust-1 is degraded at the end of the 45s soak", "web: Deployment/demo/web:",
		"rollout in progress: 1 of 2 replicas updated, 1 available", "; batch 1 rolled back to the versions it ran before"} {
		if !strings.Contains(r.Error, want) {
			t.Errorf("the halted release says %q; want %q in it", r.Error, want)
		}
	}
	if time.Since(began) < 45*time.Second {
		t.Errorf("halted %s after the release began: before its soak ended", time.Since(began))
	}
	checkBatch(t, r, 0, map[string]string{"cust-1": "rolled_back"})
	checkBatch(t, r, 1, map[string]string{"cust-2": "pending"})
	for name, id := range insts {
		if v := s.installVersions(id).ConfigVersion; v != 1 {
			t.Errorf("%s runs config version %d, want 1 (cust-1 rolled back, the others untouched)", name, v)
		}
	}
	// Back on version 1, cust-1's new pod is gone: healthy again.
	s.waitHealthState(insts["cust-1"], protocol.HealthHealthy, 2*time.Minute)
	if out := c.ok("", "releases", "show", "--app", "demo", r.ID); !strings.Contains(out, "health gate: each batch healthy for 45s after its deploys, else rollback") ||
		!strings.Contains(out, "cust-1\trolled_back") {
		t.Errorf("releases show:\n%s", out)
	}
	r = s.controlRelease(r.ID, "cancel")
	r = s.waitRelease(r.ID, "cancelled")
	checkBatch(t, r, 1, map[string]string{"cust-2": "skipped"})
}

// waitHealthState waits until the install's health is state.
func (s *stack) waitHealthState(inst, state string, within time.Duration) wire.InstallHealth {
	s.t.Helper()
	var h wire.InstallHealth
	waitFor(s.t, within, "install "+inst+" "+state, func() bool {
		s.do("GET", "/v1/installs/"+inst+"/health", nil, &h)
		return h.Health.State == state
	})
	return h
}
