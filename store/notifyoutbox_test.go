package store_test

import (
	"context"
	"testing"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

// The outbox keeps an event only when a subscription of its org asks for
// its type, and once however often it is written; a dispatched one is no
// longer pending.
func TestQueueEventOncePerSubscribedEvent(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		ctx := context.Background()
		s := storetest.Open(t, d)
		tn := storetest.NewTenant(t, s)
		ev := contract.NotificationEvent{ID: "evt_1", Type: contract.EventHealthChanged, OrgID: tn.Org.ID, Summary: "x"}
		pending := func() int {
			t.Helper()
			evs, err := s.PendingEvents(ctx, 10)
			if err != nil {
				t.Fatal(err)
			}
			return len(evs)
		}
		if err := s.QueueEvent(ctx, ev, 0); err != nil || pending() != 0 {
			t.Fatalf("with no subscription: %v, %d pending", err, pending())
		}
		if _, err := s.CreateSubscription(ctx, store.NotificationSubscription{OrgID: tn.Org.ID, Name: "h", Channel: "webhook",
			URL: "https://h.example", Enabled: true, EventTypes: []string{contract.EventHealthChanged}}); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := s.QueueEvent(ctx, ev, 0); err != nil {
				t.Fatal(err)
			}
		}
		if n := pending(); n != 1 {
			t.Fatalf("%d pending, want 1", n)
		}
		if err := s.EventDispatched(ctx, "evt_1"); err != nil {
			t.Fatal(err)
		}
		if err := s.QueueEvent(ctx, ev, 0); err != nil || pending() != 0 {
			t.Fatalf("dispatched, written again: %v, %d pending", err, pending())
		}
	})
}
