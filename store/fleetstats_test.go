package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// What the metrics read at a scrape: a queued job counts until claimed, a
// runner online once seen, an operation by kind and status; a completion
// reports the job's type and run time once, a repeat nothing.
func TestCountFleetAndCompleteJobRan(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		count := func() store.FleetStats {
			t.Helper()
			st, err := f.s.CountFleet(ctx, store.DefaultOnlineWindow)
			if err != nil {
				t.Fatal(err)
			}
			return st
		}
		if st := count(); st.RunnersOnline != 0 || st.JobsQueued != 0 || len(st.Operations) != 0 || len(st.Deliveries) != 3 ||
			st.Deliveries[store.DeliveryPending]+st.Deliveries[store.DeliveryDelivered]+st.Deliveries[store.DeliveryFailed] != 0 {
			t.Fatalf("an empty fleet: %+v; want every delivery state at 0", st)
		}
		if _, err := f.s.CreateDelivery(ctx, store.NotificationDelivery{ID: "del_fleet", OrgID: f.org.ID, SubscriptionID: "sub_x",
			EventID: "ev_x", EventType: "operation.failed", Payload: "{}"}); err != nil {
			t.Fatal(err)
		}
		j := f.enqueue(t, "wf/fleet")
		if err := f.s.TouchRunners(ctx, []string{f.runner.ID}, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.StartOperation(ctx, store.InstallOperation{OrgID: f.org.ID, InstallID: f.inst.ID, Kind: "provision",
			WorkflowID: "wf/fleet-op"}); err != nil {
			t.Fatal(err)
		}
		st := count()
		if st.RunnersOnline != 1 || st.JobsQueued != 1 || st.Operations[store.OpKey{Kind: "provision", Status: string(status.OpRunning)}] != 1 ||
			st.Deliveries[store.DeliveryPending] != 1 {
			t.Fatalf("one runner seen, one job queued, one provision running, one delivery pending: %+v", st)
		}
		if _, err := f.s.ClaimJob(ctx, f.runner.ID, time.Minute, store.Claimant{DeferredInputs: true}); err != nil {
			t.Fatal(err)
		}
		if st := count(); st.JobsQueued != 0 {
			t.Fatalf("queued after the claim: %d, want 0", st.JobsQueued)
		}
		done := protocol.CompleteRequest{Attempt: 1, Status: "succeeded"}
		ran, err := f.s.CompleteJobRan(ctx, f.runner.ID, j.ID, done)
		if err != nil || ran.Type != protocol.JobTypeNoop || ran.Duration < 0 {
			t.Fatalf("completion: %+v, %v; want type noop and a duration", ran, err)
		}
		if again, err := f.s.CompleteJobRan(ctx, f.runner.ID, j.ID, done); err != nil || again != (store.JobRan{}) {
			t.Fatalf("the same completion again: %+v, %v; want nothing reported", again, err)
		}
	})
}
