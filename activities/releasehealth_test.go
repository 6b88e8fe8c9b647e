package activities_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/outpost-dev/outpost/activities"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

// A release's health gate reads its batch's health from PostgreSQL: each
// install as the API shows it (its worst component with the object and
// condition; unknown, saying why, when its runner is offline or never
// reported), in the order asked, named.
func TestReleaseBatchHealthReadsEachInstall(t *testing.T) {
	ctx := context.Background()
	s, tn := storetest.PostgresTenant(t)
	insts := []store.Install{tn.Install}
	runners := []store.Runner{tn.Runner}
	for _, name := range []string{"customer-2", "customer-3", "customer-4"} {
		inst, r, _, err := s.CreateInstall(ctx, tn.Org.ID, tn.App.ID, name, nil)
		if err != nil {
			t.Fatal(err)
		}
		insts, runners = append(insts, inst), append(runners, r)
	}
	now := time.Now()
	if err := s.TouchRunners(ctx, []string{runners[0].ID, runners[1].ID}, now); err != nil {
		t.Fatal(err)
	}
	if err := s.TouchRunners(ctx, []string{runners[2].ID}, now.Add(-10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	web := protocol.ComponentHealth{Component: "web", State: protocol.HealthUnhealthy, Object: "Deployment/demo/web",
		Condition: "Available=False (MinimumReplicasUnavailable): 0/1 available"}
	for i, hs := range [][]protocol.ComponentHealth{{web, {Component: "db", State: protocol.HealthHealthy}},
		{{Component: "web", State: protocol.HealthHealthy}}, {{Component: "web", State: protocol.HealthHealthy}}} {
		if err := s.RecordComponentHealth(ctx, tn.Org.ID, insts[i].ID, hs); err != nil {
			t.Fatal(err)
		}
	}
	rel := newRelease(t, s, tn, insts...)

	env := activityEnv(s)
	ids := []string{insts[3].ID, insts[0].ID, insts[1].ID, insts[2].ID}
	val, err := env.ExecuteActivity(contract.ReleaseBatchHealth, rel.ID, ids)
	if err != nil {
		t.Fatal(err)
	}
	var got []contract.InstallHealth
	if err := val.Get(&got); err != nil {
		t.Fatal(err)
	}
	want := []contract.InstallHealth{
		{InstallName: "customer-4", State: protocol.HealthUnknown, Condition: "its runner has never reported"},
		{InstallName: "customer-1", State: protocol.HealthUnhealthy, Component: "web", Object: web.Object, Condition: web.Condition},
		{InstallName: "customer-2", State: protocol.HealthHealthy, Component: "web"},
		{InstallName: "customer-3", State: protocol.HealthUnknown},
	}
	for i := range want {
		want[i].InstallID = ids[i]
		if i == 3 { // offline: says since when
			if got[i].State != protocol.HealthUnknown || got[i].InstallName != "customer-3" || len(got[i].Condition) < 30 ||
				got[i].Condition[:30] != "its runner is offline (last se" {
				t.Errorf("install 3: %+v, want customer-3 unknown: its runner is offline", got[i])
			}
			continue
		}
		if got[i] != want[i] {
			t.Errorf("install %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// A batch that failed its gate is rolled back: each install the release
// deployed gets a deploy_config to the version it ran before, recorded on
// the release (rolled_back); one that ran none before is not, saying why.
func TestReleaseRollbackBringsTheInstallBack(t *testing.T) {
	ctx := context.Background()
	s, tn := storetest.PostgresTenant(t)
	other, _, _, err := s.CreateInstall(ctx, tn.Org.ID, tn.App.ID, "customer-2", nil)
	if err != nil {
		t.Fatal(err)
	}
	rel := newRelease(t, s, tn, tn.Install, other)
	env := activityEnv(s)
	for _, inst := range []store.Install{tn.Install, other} {
		var d contract.ReleaseDeploy
		val, err := env.ExecuteActivity(contract.BeginReleaseDeploy, rel.ID, inst.ID)
		if err != nil || val.Get(&d) != nil {
			t.Fatal(err)
		}
		if err := s.FinishOperation(ctx, d.OperationID, status.OpSucceeded, "", ""); err != nil {
			t.Fatal(err)
		}
		if _, err := env.ExecuteActivity(contract.FinishReleaseDeploy, rel.ID, inst.ID, d.OperationID, ""); err != nil {
			t.Fatal(err)
		}
	}
	// customer-1 ran version 1 before the release
	one := 1
	if err := s.UpdateReleaseInstall(ctx, rel.ID, tn.Install.ID, store.ReleaseInstallChange{Status: status.ReleaseInstallSucceeded, FromVersion: &one}); err != nil {
		t.Fatal(err)
	}
	var d contract.ReleaseDeploy
	if val, err := env.ExecuteActivity(contract.BeginReleaseRollback, rel.ID, other.ID); err != nil || val.Get(&d) != nil ||
		d.Failed != "install customer-2 not rolled back: it ran no config version before the release" {
		t.Fatalf("rollback of customer-2: %+v, %v", d, err)
	}
	if val, err := env.ExecuteActivity(contract.BeginReleaseRollback, rel.ID, tn.Install.ID); err != nil || val.Get(&d) != nil || d.OperationID == "" {
		t.Fatalf("rollback of customer-1: %+v, %v", d, err)
	}
	op, err := s.GetOperationByID(ctx, d.OperationID)
	if err != nil || op.Kind != contract.OpDeployConfig || op.ConfigVersion != 1 {
		t.Fatalf("rollback operation %+v, %v: want a deploy_config to version 1", op, err)
	}
	if err := s.FinishOperation(ctx, d.OperationID, status.OpSucceeded, "", ""); err != nil {
		t.Fatal(err)
	}
	var why string
	if val, err := env.ExecuteActivity(contract.FinishReleaseRollback, rel.ID, tn.Install.ID, d.OperationID, ""); err != nil || val.Get(&why) != nil || why != "" {
		t.Fatalf("finish rollback: %q, %v", why, err)
	}
	got, err := s.GetReleaseByID(ctx, rel.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ri := got.Installs[0]; ri.Status != status.ReleaseInstallRolledBack || ri.RollbackOperationID != d.OperationID || ri.OperationID == d.OperationID {
		t.Fatalf("customer-1 in the release: %+v, want rolled_back by %s", ri, d.OperationID)
	}
}

func newRelease(t *testing.T, s *store.Store, tn storetest.Tenant, insts ...store.Install) store.Release {
	t.Helper()
	r := store.Release{OrgID: tn.Org.ID, AppID: tn.App.ID, ConfigVersion: 2, BatchSize: len(insts), FailureThreshold: 1,
		SoakMS: 120000, OnUnhealthy: contract.OnUnhealthyRollback}
	for _, inst := range insts {
		r.Installs = append(r.Installs, store.ReleaseInstall{InstallID: inst.ID, InstallName: inst.Name, ToVersion: 2})
	}
	rel, err := s.CreateRelease(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

func activityEnv(s *store.Store) *testsuite.TestActivityEnvironment {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	activities.Register(env, activities.Deps{Store: s})
	return env
}
