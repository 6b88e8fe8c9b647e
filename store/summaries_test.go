package store_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

// An install's summary is its newest operation (whether a step of it waits
// for approval) and its drifted parts; an install with neither is absent,
// and another org's installs are not there.
func TestInstallSummaries(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		start := func(orgID, installID, kind string) store.InstallOperation {
			op, err := f.s.StartOperation(ctx, store.InstallOperation{OrgID: orgID, InstallID: installID, Kind: kind,
				ApprovalMode: status.Prompt, WorkflowID: "wf"})
			if err != nil {
				t.Fatal(err)
			}
			return op
		}
		first := start(f.org.ID, f.inst.ID, store.OpProvision)
		if err := f.s.FinishOperation(ctx, first.ID, status.OpSucceeded, "", status.InstallActive); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond) // a later created_at
		latest := start(f.org.ID, f.inst.ID, store.OpDeployComponent)
		if err := f.s.AddSteps(ctx, latest.ID, []store.NewStep{{Name: "sandbox"}, {Name: "web", After: []string{"sandbox"}}}); err != nil {
			t.Fatal(err)
		}
		if err := f.s.UpdateStep(ctx, latest.ID, "web", store.StepChange{Status: new(status.StepWaitingApproval)}); err != nil {
			t.Fatal(err)
		}
		for name, drifted := range map[string]bool{"web": true, "api": true, "sandbox": false} {
			if err := f.s.RecordDrift(ctx, f.inst.ID, name, first.ID, time.Now(), drifted, "plan of "+name); err != nil {
				t.Fatal(err)
			}
		}
		rival, _, app := storetest.NewOrgApp(t, f.s, "rival")
		theirs, _, _, err := f.s.CreateInstall(ctx, rival.ID, app.ID, "customer-1", nil)
		if err != nil {
			t.Fatal(err)
		}
		start(rival.ID, theirs.ID, store.OpProvision)
		if err := f.s.RecordDrift(ctx, theirs.ID, "web", first.ID, time.Now(), true, "theirs"); err != nil {
			t.Fatal(err)
		}

		sums, err := f.s.InstallSummaries(ctx, f.org.ID)
		if err != nil {
			t.Fatal(err)
		}
		got := sums[f.inst.ID]
		if len(sums) != 1 || got.LastOperation == nil || got.LastOperation.ID != latest.ID || !got.WaitingApproval ||
			!reflect.DeepEqual(got.Drifted, []string{"api", "web"}) {
			t.Fatalf("summaries %+v; want the install's deploy_component waiting for approval, api and web drifted", sums)
		}
	})
}
