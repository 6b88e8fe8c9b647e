package api

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/api/gateway"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// A runner's heartbeat gets what to check (its install's helm components,
// as their latest deploy left them) and carries what changed; GET
// .../health and the installs list show it, and unknown once the runner is
// offline.
func TestRunnerReportsChangeWhatHealthShows(t *testing.T) {
	e := newTestEnv(t)
	_, inst := e.fixture()
	gw := gateway.New(gateway.Config{Store: e.store, TouchInterval: 50 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	go gw.Run(ctx)
	gws := httptest.NewServer(gw.Handler())
	t.Cleanup(gws.Close)
	var reg protocol.RegisterResponse
	gwPost(t, gws.URL, "", protocol.PathRegister, protocol.RegisterRequest{RegistrationToken: inst.Runner.RegistrationToken}, &reg)
	e.deployedHelm(inst, "web")

	var old protocol.RunnerHeartbeatResponse
	gwPost(t, gws.URL, reg.Token, protocol.PathRunnerHeartbeat, protocol.RunnerHeartbeatRequest{}, &old)
	if old.Health != nil {
		t.Errorf("a runner that does not read health (no health_spec) was sent a spec: %+v", old.Health)
	}
	var first protocol.RunnerHeartbeatResponse
	gwPost(t, gws.URL, reg.Token, protocol.PathRunnerHeartbeat, protocol.RunnerHeartbeatRequest{HealthSpec: protocol.HealthSpecNone}, &first)
	if first.Health == nil || len(first.Health.Components) != 1 || first.Health.Components[0].Release != "web-release" ||
		first.Health.Components[0].Kubeconfig != "kubeconfig of web" || first.Health.IntervalMS != gateway.DefaultHealthInterval.Milliseconds() {
		t.Fatalf("first heartbeat's health spec: %+v; want web's release every 60s", first.Health)
	}
	var h wire.InstallHealth
	e.call("GET", "/v1/installs/"+inst.ID+"/health", nil, 200, &h)
	if h.Health.State != protocol.HealthUnknown || len(h.Components) != 0 {
		t.Fatalf("before any report: %+v; want unknown", h)
	}

	report := protocol.RunnerHeartbeatRequest{HealthSpec: first.Health.Version, Health: []protocol.ComponentHealth{{Component: "web",
		State: protocol.HealthUnhealthy, Object: "Deployment/demo/web", Condition: "Available=False: 0 of 1 replicas available, 1 updated"}}}
	var again protocol.RunnerHeartbeatResponse
	gwPost(t, gws.URL, reg.Token, protocol.PathRunnerHeartbeat, report, &again)
	if again.Health != nil {
		t.Errorf("a heartbeat with the current spec's version got the spec again: %+v", again.Health)
	}
	waitFor(t, "the runner seen", func() bool {
		e.call("GET", "/v1/installs/"+inst.ID+"/health", nil, 200, &h)
		return h.Health.State != protocol.HealthUnknown
	})
	if h.Health.State != protocol.HealthUnhealthy || h.Health.Component != "web" || h.Health.Object != "Deployment/demo/web" ||
		len(h.Components) != 1 || h.Components[0].State != protocol.HealthUnhealthy || len(h.Transitions) != 1 || h.Transitions[0].To != "unhealthy" {
		t.Fatalf("after the report: %+v; want web unhealthy, one transition", h)
	}
	var list wire.InstallList
	e.call("GET", "/v1/installs", nil, 200, &list)
	if len(list.Installs) != 1 || list.Installs[0].Health == nil || list.Installs[0].Health.State != protocol.HealthUnhealthy {
		t.Fatalf("installs list: %+v; want the install unhealthy", list.Installs)
	}

	// An unchanged heartbeat (the same state again) adds no transition.
	gwPost(t, gws.URL, reg.Token, protocol.PathRunnerHeartbeat, report, &again)
	e.call("GET", "/v1/installs/"+inst.ID+"/health", nil, 200, &h)
	if len(h.Transitions) != 1 {
		t.Errorf("transitions after a repeated report: %+v; want 1", h.Transitions)
	}

	e.srv.now = func() time.Time { return time.Now().Add(time.Hour) } // the runner has not been seen for an hour
	e.call("GET", "/v1/installs/"+inst.ID+"/health", nil, 200, &h)
	if h.Health.State != protocol.HealthUnknown || h.Health.Since == nil || h.Components[0].State != protocol.HealthUnknown {
		t.Errorf("with the runner offline: %+v; want unknown since it was last seen", h)
	}
	e.call("GET", "/v1/installs", nil, 200, &list)
	if list.Installs[0].Health.State != protocol.HealthUnknown {
		t.Errorf("installs list with the runner offline: %+v", list.Installs[0].Health)
	}
}

// deployedHelm records a succeeded helm deploy of component for the
// install, as a deploy operation's step leaves it.
func (e *testEnv) deployedHelm(inst installAnswer, component string) {
	e.t.Helper()
	ctx := context.Background()
	op, err := e.store.StartOperation(ctx, store.InstallOperation{OrgID: e.org.ID, InstallID: inst.ID, Kind: "deploy", WorkflowID: "wf/health"})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.store.AddSteps(ctx, op.ID, []store.NewStep{{Name: component}}); err != nil {
		e.t.Fatal(err)
	}
	raw, _ := json.Marshal(protocol.HelmManifest{Operation: protocol.HelmDeploy, Kubeconfig: "kubeconfig of " + component,
		Release: component + "-release", Namespace: "demo"})
	j, _, err := e.store.EnqueueJob(ctx, store.JobSpec{Key: op.ID + "/" + component, OrgID: e.org.ID, RunnerID: inst.Runner.ID,
		InstallID: &inst.ID, Type: protocol.JobTypeHelm, Manifest: raw})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.store.UpdateStep(ctx, op.ID, component, store.StepChange{ApplyJobID: &j.ID}); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.store.ClaimJob(ctx, inst.Runner.ID, time.Minute, store.Claimant{DeferredInputs: true}); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.store.CompleteJobRan(ctx, inst.Runner.ID, j.ID, protocol.CompleteRequest{Attempt: 1, Status: "succeeded"}); err != nil {
		e.t.Fatal(err)
	}
}

// gwPost posts body to the gateway and decodes its 200 answer into out.
func gwPost(t *testing.T, base, token, path string, body, out any) {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", base+path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	if resp.StatusCode != 200 && resp.StatusCode != 201 {
		t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b.String())
	}
	if err := json.Unmarshal(b.Bytes(), out); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond for up to 10 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}
