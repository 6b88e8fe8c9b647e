package activities_test

import (
	"context"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/outpost-dev/outpost/activities"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

// A step that starts applying without a plan (a hook's action run) gets its
// start time then; a planned step keeps the time its plan started.
func TestStepStartsWhenItAppliesWithoutAPlan(t *testing.T) {
	ctx := context.Background()
	s, tn := storetest.PostgresTenant(t)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	activities.Register(env, activities.Deps{Store: s})
	op, err := s.StartOperation(ctx, store.InstallOperation{OrgID: tn.Org.ID, InstallID: tn.Install.ID, Kind: contract.OpProvision,
		WorkflowID: "install/" + tn.Install.ID + "/provision", ApprovalMode: status.ApproveAll})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddSteps(ctx, op.ID, []store.NewStep{{Name: "hook"}, {Name: "db"}}); err != nil {
		t.Fatal(err)
	}
	set := func(step string, st status.Step) store.InstallStep {
		t.Helper()
		if _, err := env.ExecuteActivity(contract.SetStepStatus, op.ID, step, st, ""); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetStep(ctx, op.ID, step)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if hook := set("hook", status.StepApplying); hook.StartedAt == nil {
		t.Fatal("a step applying without a plan has no start time")
	}
	planned := set("db", status.StepPlanning).StartedAt
	if db := set("db", status.StepApplying); planned == nil || db.StartedAt == nil || !db.StartedAt.Equal(*planned) {
		t.Fatalf("a planned step's start moved when it applied: planned %v, now %v", planned, db.StartedAt)
	}
}
