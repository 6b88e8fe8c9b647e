package worker_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
	"github.com/outpost-dev/outpost/worker"
)

var newEventTypes = []string{contract.EventHealthChanged, contract.EventDriftFound, contract.EventPolicyDenied, contract.EventRunnerOffline}

// The four events whose cause is no operation's or release's end, on a real
// Temporal server, worker and PostgreSQL, delivered by the worker's outbox
// loop: each reaches the matching subscription's receiver signed, and once
// although each cause happens twice (a report repeated, an activity
// retried, two sweeps); subscriptions filtered to another app, to labels
// the install lacks, or to a runner offline longer, get nothing.
func TestNewEventsReachAReceiverOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	ctx := context.Background()
	cfg, s, tn := notifyPlane(t)
	recv, other := newReceiver(t, 0, false), newReceiver(t, 0, false)
	sub := subscribe(t, s, store.NotificationSubscription{OrgID: tn.Org.ID, Name: "ops", URL: recv.URL,
		EventTypes: newEventTypes, AppIDs: []string{tn.App.ID}, RunnerOfflineMinutes: 5})
	recv.secret = sub.Secret
	for _, f := range []store.NotificationSubscription{{AppIDs: []string{"app_other"}}, {LabelSelector: "tier=gold"}, {RunnerOfflineMinutes: 60}} {
		types := newEventTypes
		if f.RunnerOfflineMinutes != 0 {
			types = []string{contract.EventRunnerOffline}
		}
		f.OrgID, f.Name, f.URL, f.EventTypes = tn.Org.ID, "filtered out", other.URL, types
		subscribe(t, s, f)
	}

	twice := func(f func()) { f(); f() }
	twice(func() {
		reportHealth(t, s, tn, protocol.ComponentHealth{Component: "web", State: protocol.HealthHealthy})
	})
	twice(func() {
		reportHealth(t, s, tn, protocol.ComponentHealth{Component: "web", State: protocol.HealthUnhealthy,
			Object: "Deployment/web", Condition: "Available=False"})
	})
	op := driftCheckWithSteps(t, s, tn, "web", "db")
	job := succeededJob(t, s, tn, `{"has_changes":true,"missing":["blob sha256:aa"],"plan":"1 blob missing"}`)
	denial := "plan: plan policies: vendor policy outpost.no_public_bucket denies: aws_s3_bucket.b is public"
	twice(func() {
		runActivity(t, cfg, contract.RecordImageDrift, op.ID, "web", job.ID)
		runActivity(t, cfg, contract.SetStepStatus, op.ID, "db", status.StepFailed, denial)
	})
	if err := s.TouchRunners(ctx, []string{tn.Runner.ID}, time.Now().Add(-15*time.Minute)); err != nil {
		t.Fatal(err)
	}
	outbox := worker.NewOutbox(cfg)
	twice(func() {
		if err := outbox.Sweep(ctx, time.Now()); err != nil {
			t.Fatal(err)
		}
	})
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = outbox.Run(runCtx) }()

	got := waitEvents(t, recv, 5, time.Minute)
	time.Sleep(2 * time.Second) // a second delivery of any of them would come now
	_, bad, events := recv.seen()
	if len(bad) > 0 || len(events) != 5 {
		t.Fatalf("received %d events (bad: %q): %s", len(events), bad, summaries(events))
	}
	base := "https://outpost.example/ui/#/installs/" + tn.Install.ID
	want := map[string]string{
		"health.changed/healthy":   "Install customer-1 is healthy (was not reported): component web",
		"health.changed/unhealthy": "Install customer-1 is unhealthy (was healthy): component web, Deployment/web",
		"drift.found":              "Install customer-1: drift check found drift in web (1 to add, 0 to change, 0 to destroy)",
		"policy.denied":            "Install customer-1: drift check plan of db denied by vendor policy outpost.no_public_bucket",
		"runner.offline":           "Install customer-1: its runner has been offline for more than 5 minutes (last seen ",
	}
	for _, ev := range got {
		key := ev.Type
		if ev.Type == contract.EventHealthChanged {
			key += "/" + strings.Fields(ev.Summary)[3]
		}
		if w, ok := want[key]; !ok || !strings.HasPrefix(ev.Summary, w) || ev.InstallID != tn.Install.ID ||
			ev.AppID != tn.App.ID || ev.Links["install"] != base {
			t.Errorf("event %s: %+v", key, ev)
		}
		delete(want, key)
		if strings.Contains(ev.Summary, "Available=False") {
			t.Errorf("health.changed carries the condition, which may quote a check's output: %q", ev.Summary)
		}
		if ev.Type == contract.EventDriftFound || ev.Type == contract.EventPolicyDenied {
			if ev.OperationID != op.ID || ev.Links["operation"] != base+"/operations/"+op.ID {
				t.Errorf("event %s without its operation: %+v", key, ev)
			}
		}
		if strings.Contains(ev.Summary, "is public") {
			t.Errorf("policy.denied carries the policy's message: %q", ev.Summary)
		}
	}
	if len(want) > 0 {
		t.Errorf("missing events: %v", want)
	}
	if n, _, _ := other.seen(); n != 0 {
		t.Fatalf("the filtered-out subscriptions got %d requests", n)
	}
}

// reportHealth records a runner's health report as the gateway does.
func reportHealth(t *testing.T, s *store.Store, tn storetest.Tenant, h protocol.ComponentHealth) {
	t.Helper()
	if err := s.RecordComponentHealth(context.Background(), tn.Org.ID, tn.Install.ID, []protocol.ComponentHealth{h}); err != nil {
		t.Fatal(err)
	}
}

// driftCheckWithSteps records a drift check of the install with its steps.
func driftCheckWithSteps(t *testing.T, s *store.Store, tn storetest.Tenant, steps ...string) store.InstallOperation {
	t.Helper()
	ctx := context.Background()
	op, err := s.StartOperation(ctx, store.InstallOperation{OrgID: tn.Org.ID, InstallID: tn.Install.ID, Kind: contract.OpDriftCheck,
		PlanOnly: true, ApprovalMode: status.ApproveAll, WorkflowID: "drift-check-test"})
	if err != nil {
		t.Fatal(err)
	}
	var add []store.NewStep
	for _, st := range steps {
		add = append(add, store.NewStep{Name: st})
	}
	if err := s.AddSteps(ctx, op.ID, add); err != nil {
		t.Fatal(err)
	}
	return op
}

// succeededJob is a job of the install's runner that succeeded with these
// outputs.
func succeededJob(t *testing.T, s *store.Store, tn storetest.Tenant, outputs string) store.Job {
	t.Helper()
	ctx := context.Background()
	job, _, err := s.EnqueueJob(ctx, store.JobSpec{Key: "test/sync-plan", OrgID: tn.Org.ID, RunnerID: tn.Runner.ID,
		InstallID: &tn.Install.ID, Type: protocol.JobTypeOCI, Manifest: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ClaimJob(ctx, tn.Runner.ID, time.Minute, store.Claimant{}); err != nil {
		t.Fatal(err)
	}
	if err := s.CompleteJob(ctx, tn.Runner.ID, job.ID, protocol.CompleteRequest{Attempt: 1, Status: protocol.StatusSucceeded,
		Outputs: json.RawMessage(outputs)}); err != nil {
		t.Fatal(err)
	}
	return job
}

// runActivity runs an activity as a workflow would, with the worker's
// notifications.
func runActivity(t *testing.T, cfg worker.Config, name string, args ...any) {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	worker.RegisterActivities(env, cfg)
	if _, err := env.ExecuteActivity(name, args...); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// waitEvents waits for the receiver to have accepted n events.
func waitEvents(t *testing.T, r *receiver, n int, within time.Duration) []contract.NotificationEvent {
	t.Helper()
	for deadline := time.Now().Add(within); ; time.Sleep(200 * time.Millisecond) {
		_, _, events := r.seen()
		if len(events) >= n {
			return events
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d events after %s, want %d: %s", len(events), within, n, summaries(events))
		}
	}
}

func summaries(events []contract.NotificationEvent) string {
	var out []string
	for _, ev := range events {
		out = append(out, ev.Type+": "+ev.Summary)
	}
	slices.Sort(out)
	return strings.Join(out, "; ")
}
