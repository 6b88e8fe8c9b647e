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

// hookInputsApp: action gate runs before every provision, given its
// inputs by the hook: a literal, a template of the install's name, and a
// sensitive input from the sandbox's outputs; its level input keeps its
// default.
var hookInputsApp = storetest.MinimalApp(map[string]string{
	"actions/gate.toml": `[[inputs]]
name = "mode"
type = "string"
required = true
[[inputs]]
name = "who"
type = "string"
default = "nobody"
[[inputs]]
name = "key"
type = "string"
default = ""
sensitive = true
[[inputs]]
name = "level"
type = "number"
default = 2
[[triggers]]
type = "manual"
[[triggers]]
type = "before"
operation = "provision"
inputs = { mode = "strict", who = "{{ .install.name }}", key = "k-{{ .install.id }}" }
[[steps]]
name = "check"
command = ["/bin/true"]
`,
})

// TestHookRunGetsItsTriggersInputs: the run a before-provision hook
// records has the inputs its trigger gives, rendered with the install's
// data, the sensitive one apart; a retried call finds the same run.
func TestHookRunGetsItsTriggersInputs(t *testing.T) {
	ctx := context.Background()
	s, tn := storetest.PostgresTenant(t)
	cfg := storetest.SyncConfig(t, s, tn, hookInputsApp)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	activities.Register(env, activities.Deps{Store: s})
	op, err := s.StartOperation(ctx, store.InstallOperation{OrgID: tn.Org.ID, InstallID: tn.Install.ID, Kind: contract.OpProvision,
		WorkflowID: "install/" + tn.Install.ID + "/provision", ApprovalMode: status.ApproveAll, ConfigVersion: cfg.Version})
	if err != nil {
		t.Fatal(err)
	}
	var plans [2]contract.ActionRunPlan
	for i := range plans { // retried: one run
		v, err := env.ExecuteActivity(contract.RecordHookRun, op.ID, "before:gate")
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Get(&plans[i]); err != nil {
			t.Fatal(err)
		}
	}
	if plans[0].RunID == "" || plans[0].RunID != plans[1].RunID {
		t.Fatalf("runs %q and %q; want one run, found again", plans[0].RunID, plans[1].RunID)
	}
	run, err := s.GetActionRunByID(ctx, plans[0].RunID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Trigger != "before" || len(run.Inputs) != 2 || run.Inputs["mode"] != "strict" || run.Inputs["who"] != tn.Install.Name {
		t.Errorf("run %s: trigger %q, inputs %v; want before, mode strict and who %q", run.ID, run.Trigger, run.Inputs, tn.Install.Name)
	}
	if want := "k-" + tn.Install.ID; len(run.SensitiveInputs) != 1 || run.SensitiveInputs["key"] != want {
		t.Errorf("sensitive inputs = %v; want key %q only", run.SensitiveInputs, want)
	}
}
