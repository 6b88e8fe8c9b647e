package activities_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/outpost-dev/outpost/activities"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

// startedDeliveries records the deliveries whose workflows would start.
type startedDeliveries struct {
	mu  sync.Mutex
	ids []string
}

func (r *startedDeliveries) StartDelivery(_ context.Context, _, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ids = append(r.ids, id)
	return nil
}

// A step waiting for approval and a halted release emit their events to
// the subscriptions that match: by event type, by the install's labels (a
// release's event matches no selector); an activity retried emits nothing
// twice.
func TestApprovalAndReleaseEventsReachMatchingSubscriptions(t *testing.T) {
	ctx := context.Background()
	s, tn := storetest.PostgresTenant(t)
	if _, err := s.SetInstallLabels(ctx, tn.Org.ID, tn.Install.ID, map[string]string{"tier": "gold"}); err != nil {
		t.Fatal(err)
	}
	mk := func(name, selector string, types ...string) string {
		sub, err := s.CreateSubscription(ctx, store.NotificationSubscription{OrgID: tn.Org.ID, Name: name, EventTypes: types,
			LabelSelector: selector, Channel: "slack", URL: "https://hooks.slack.test/x", Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		return sub.ID
	}
	gold := mk("gold", "tier=gold", contract.EventOperationApproval, contract.EventReleaseHalted)
	silver := mk("silver", "tier=silver", contract.EventOperationApproval)
	all := mk("all", "", contract.EventReleaseHalted)

	rec := &startedDeliveries{}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	activities.Register(env, activities.Deps{Store: s, Notify: activities.NotifyConfig{Deliveries: rec}})

	op, err := s.StartOperation(ctx, store.InstallOperation{OrgID: tn.Org.ID, InstallID: tn.Install.ID, Kind: contract.OpProvision,
		WorkflowID: "install/" + tn.Install.ID + "/provision", ApprovalMode: status.Prompt})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddSteps(ctx, op.ID, []store.NewStep{{Name: status.SandboxStep}}); err != nil {
		t.Fatal(err)
	}
	for range 2 { // retried: one event
		if _, err := env.ExecuteActivity(contract.SetStepStatus, op.ID, status.SandboxStep, status.StepWaitingApproval, ""); err != nil {
			t.Fatal(err)
		}
	}
	rel, err := s.CreateRelease(ctx, store.Release{OrgID: tn.Org.ID, AppID: tn.App.ID, ConfigVersion: 1, BatchSize: 1, FailureThreshold: 1,
		Installs: []store.ReleaseInstall{{InstallID: tn.Install.ID, InstallName: tn.Install.Name, Batch: 1, ToVersion: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.ExecuteActivity(contract.SetReleaseStatus, rel.ID, status.ReleaseHalted, "too many failed"); err != nil {
		t.Fatal(err)
	}

	got := map[string][]string{}
	for _, id := range []string{gold, silver, all} {
		ds, err := s.ListDeliveries(ctx, tn.Org.ID, id, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			var ev contract.NotificationEvent
			if err := json.Unmarshal([]byte(d.Payload), &ev); err != nil || ev.Type != d.EventType {
				t.Fatalf("payload %s: %v", d.Payload, err)
			}
			got[id] = append(got[id], d.EventType)
			if ev.Type == contract.EventReleaseHalted && !strings.HasSuffix(ev.Summary, " halted: too many failed") {
				t.Errorf("release halted summary %q: want it to end with why", ev.Summary)
			}
		}
	}
	if !slices.Equal(got[gold], []string{contract.EventOperationApproval}) || len(got[silver]) != 0 ||
		!slices.Equal(got[all], []string{contract.EventReleaseHalted}) {
		t.Fatalf("deliveries: gold %v, silver %v, all %v", got[gold], got[silver], got[all])
	}
	if len(rec.ids) != 3 { // the approval's twice (the retry's start is refused by Temporal), the release's once
		t.Fatalf("started %v", rec.ids)
	}
}
