package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// A component's health is what its runner last reported; a transition is
// recorded once per change of state (not for a repeat, nor for a new reason
// alone), and the install reads as its worst component, or unknown while its
// runner is offline.
func TestComponentHealthTransitionsOncePerChange(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		record := func(hs ...protocol.ComponentHealth) {
			t.Helper()
			if err := f.s.RecordComponentHealth(ctx, f.org.ID, f.inst.ID, hs); err != nil {
				t.Fatal(err)
			}
		}
		web := func(state, cond string) protocol.ComponentHealth {
			return protocol.ComponentHealth{Component: "web", State: state, Object: "Deployment/demo/web", Condition: cond}
		}
		record(web(protocol.HealthHealthy, ""), protocol.ComponentHealth{Component: "db", State: protocol.HealthHealthy})
		record(web(protocol.HealthHealthy, "")) // a repeat
		record(web(protocol.HealthDegraded, "1 of 2 replicas available"))
		record(web(protocol.HealthDegraded, "1 of 3 replicas available")) // a new reason, the same state
		record(web(protocol.HealthUnhealthy, "0 of 3 replicas available"))

		trans, err := f.s.HealthTransitions(ctx, f.inst.ID, 10)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tr := range trans {
			got = append(got, tr.Component+":"+tr.FromState+"→"+tr.ToState)
		}
		want := []string{"web:degraded→unhealthy", "web:healthy→degraded", "web:→healthy", "db:→healthy"}
		if len(trans) != 4 || got[0] != want[0] || got[1] != want[1] || !(got[2] == want[2] || got[3] == want[2]) {
			t.Fatalf("transitions, newest first: %v; want %v", got, want)
		}
		comps, err := f.s.ComponentHealthOf(ctx, f.inst.ID)
		if err != nil {
			t.Fatal(err)
		}
		if c := comps[f.inst.ID]; len(c) != 2 || c[1].Component != "web" || c[1].State != protocol.HealthUnhealthy ||
			c[1].Condition != "0 of 3 replicas available" || !c[1].Since.Equal(trans[0].At) {
			t.Fatalf("current health: %+v; want web unhealthy since its last transition %v", c, trans[0].At)
		}

		now := time.Now()
		seen := now.Add(-10 * time.Second)
		runner := f.runner
		runner.LastSeenAt = &seen
		h := store.SummarizeHealth(comps[f.inst.ID], &runner, now, store.DefaultOnlineWindow)
		if h.State != protocol.HealthUnhealthy || h.Component != "web" || h.Object != "Deployment/demo/web" {
			t.Errorf("install health with its runner online: %+v; want unhealthy because of web's Deployment", h)
		}
		long := now.Add(-time.Hour)
		runner.LastSeenAt = &long
		if h := store.SummarizeHealth(comps[f.inst.ID], &runner, now, store.DefaultOnlineWindow); h.State != protocol.HealthUnknown ||
			h.Since == nil || !h.Since.Equal(long) {
			t.Errorf("install health with its runner offline: %+v; want unknown since it was last seen", h)
		}

		if err := f.s.ForgetComponentHealth(ctx, f.inst.ID, []string{"db"}); err != nil {
			t.Fatal(err)
		}
		if comps, _ := f.s.ComponentHealthOf(ctx, f.inst.ID); len(comps[f.inst.ID]) != 1 || comps[f.inst.ID][0].Component != "db" {
			t.Errorf("after web is no longer deployed: %+v", comps)
		}
	})
}

// What a runner checks is each component's latest succeeded helm deploy, as
// its job's manifest had it; a component whose latest is an uninstall is
// not checked.
func TestHealthTargetsAreTheLatestDeploys(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		helmStep := func(component, op string) {
			t.Helper()
			o, err := f.s.StartOperation(ctx, store.InstallOperation{OrgID: f.org.ID, InstallID: f.inst.ID, Kind: "deploy",
				WorkflowID: "wf/health-" + component + "-" + op})
			if err != nil {
				t.Fatal(err)
			}
			if err := f.s.AddSteps(ctx, o.ID, []store.NewStep{{Name: component}}); err != nil {
				t.Fatal(err)
			}
			raw, _ := json.Marshal(protocol.HelmManifest{Operation: op, Kubeconfig: "kubeconfig of " + component, Release: component, Namespace: "ns"})
			j, _, err := f.s.EnqueueJob(ctx, store.JobSpec{Key: o.ID + "/" + component, OrgID: f.org.ID, RunnerID: f.runner.ID,
				InstallID: &f.inst.ID, Type: protocol.JobTypeHelm, Manifest: raw})
			if err != nil {
				t.Fatal(err)
			}
			if err := f.s.UpdateStep(ctx, o.ID, component, store.StepChange{ApplyJobID: &j.ID}); err != nil {
				t.Fatal(err)
			}
			if _, err := f.s.ClaimJob(ctx, f.runner.ID, time.Minute, store.Claimant{DeferredInputs: true}); err != nil {
				t.Fatal(err)
			}
			if _, err := f.s.CompleteJobRan(ctx, f.runner.ID, j.ID, protocol.CompleteRequest{Attempt: 1, Status: "succeeded"}); err != nil {
				t.Fatal(err)
			}
			if err := f.s.FinishOperation(ctx, o.ID, status.OpSucceeded, "", status.InstallActive); err != nil {
				t.Fatal(err)
			}
		}
		helmStep("web", protocol.HelmDeploy)
		helmStep("api", protocol.HelmDeploy)
		helmStep("api", protocol.HelmUninstall)
		targets, err := f.s.HealthTargets(ctx, f.inst.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(targets) != 1 || targets[0] != (protocol.HealthTarget{Component: "web", Release: "web", Namespace: "ns", Kubeconfig: "kubeconfig of web"}) {
			t.Fatalf("health targets: %+v; want web's deploy only", targets)
		}
	})
}
