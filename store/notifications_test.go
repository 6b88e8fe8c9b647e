package store_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

// A webhook's signing secret is made by the store, given back at creation
// and to readers in the server, and sealed at rest: the database never holds
// it in clear.
func TestSubscriptionSecretIsSealedAtRest(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		ctx, s := context.Background(), storetest.Open(t, d)
		tn := storetest.NewTenant(t, s)
		sub, err := s.CreateSubscription(ctx, store.NotificationSubscription{OrgID: tn.Org.ID, Name: "ops",
			EventTypes: []string{"operation.failed"}, AppIDs: []string{tn.App.ID}, Channel: "webhook", URL: "https://example.test/hook", Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(sub.Secret, "whsec_") || !strings.HasPrefix(sub.ID, "nsub_") {
			t.Fatalf("created %s with secret %q", sub.ID, sub.Secret)
		}
		if bytes.Contains(storetest.DatabaseBytes(t, s), []byte(sub.Secret)) {
			t.Fatal("the database holds the signing secret in clear")
		}
		got, err := s.GetSubscription(ctx, tn.Org.ID, sub.ID)
		if err != nil || got.Secret != sub.Secret || !slices.Equal(got.AppIDs, []string{tn.App.ID}) {
			t.Fatalf("read back %+v, %v", got, err)
		}
		slack, err := s.CreateSubscription(ctx, store.NotificationSubscription{OrgID: tn.Org.ID, Name: "chat",
			EventTypes: []string{"release.halted"}, Channel: "slack", URL: "https://hooks.slack.test/x", Enabled: true})
		if err != nil || slack.Secret != "" {
			t.Fatalf("a Slack subscription got secret %q (%v)", slack.Secret, err)
		}
	})
}

// Updates write only what they name; a disabled subscription gets no
// events; deleting one deletes its deliveries.
func TestSubscriptionLifecycle(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		ctx, s := context.Background(), storetest.Open(t, d)
		tn := storetest.NewTenant(t, s)
		sub, err := s.CreateSubscription(ctx, store.NotificationSubscription{OrgID: tn.Org.ID, Name: "ops",
			EventTypes: []string{"operation.failed"}, Channel: "webhook", URL: "https://example.test/hook", Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		if subs, _ := s.EnabledSubscriptions(ctx, tn.Org.ID, "operation.failed"); len(subs) != 1 {
			t.Fatalf("enabled subscriptions to operation.failed: %d", len(subs))
		}
		if subs, _ := s.EnabledSubscriptions(ctx, tn.Org.ID, "release.halted"); len(subs) != 0 {
			t.Fatalf("enabled subscriptions to release.halted: %d", len(subs))
		}
		off := false
		got, err := s.UpdateSubscription(ctx, tn.Org.ID, sub.ID, store.SubscriptionChange{Enabled: &off})
		if err != nil || got.Enabled || got.Name != "ops" || got.Secret != sub.Secret {
			t.Fatalf("after disabling: %+v, %v", got, err)
		}
		if subs, _ := s.EnabledSubscriptions(ctx, tn.Org.ID, "operation.failed"); len(subs) != 0 {
			t.Fatal("a disabled subscription is still enabled")
		}
		id := store.DeliveryID("evt_1", sub.ID)
		for want := range []bool{true, false} {
			created, err := s.CreateDelivery(ctx, store.NotificationDelivery{ID: id, OrgID: tn.Org.ID, SubscriptionID: sub.ID,
				EventID: "evt_1", EventType: "operation.failed", Payload: "{}"})
			if err != nil || created != (want == 0) {
				t.Fatalf("create %d: created %v, %v", want, created, err)
			}
		}
		for i, code := range []int{500, 200} {
			if err := s.RecordAttempt(ctx, store.NotificationAttempt{DeliveryID: id, Attempt: i + 1, StatusCode: code}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.FinishDelivery(ctx, id, store.DeliveryDelivered); err != nil {
			t.Fatal(err)
		}
		ds, err := s.ListDeliveries(ctx, tn.Org.ID, sub.ID, 10)
		if err != nil || len(ds) != 1 || ds[0].State != store.DeliveryDelivered || len(ds[0].Attempts) != 2 || ds[0].Attempts[1].StatusCode != 200 {
			t.Fatalf("deliveries %+v, %v", ds, err)
		}
		if err := s.DeleteSubscription(ctx, tn.Org.ID, sub.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetDelivery(ctx, tn.Org.ID, id); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the delivery of a deleted subscription: %v", err)
		}
		if err := s.DeleteSubscription(ctx, tn.Org.ID, sub.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("deleting it again: %v", err)
		}
	})
}
