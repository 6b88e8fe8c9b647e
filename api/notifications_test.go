package api

import (
	"context"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/store"
)

func (o *recordingOps) StartDelivery(_ context.Context, orgID, deliveryID string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.deliveries = append(o.deliveries, orgID+"/"+deliveryID)
	return nil
}

func (o *recordingOps) startedDeliveries() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.deliveries...)
}

// notificationWorld is a subscription of e's org with one delivery.
func (e *testEnv) notificationWorld() (subID, deliveryID string) {
	e.t.Helper()
	ctx := context.Background()
	sub, err := e.store.CreateSubscription(ctx, store.NotificationSubscription{OrgID: e.org.ID, Name: "world",
		EventTypes: []string{"operation.failed"}, Channel: "webhook", URL: "https://hooks.example/x", Enabled: true})
	if err != nil {
		e.t.Fatal(err)
	}
	d := store.NotificationDelivery{ID: store.DeliveryID("evt_world", sub.ID), OrgID: e.org.ID, SubscriptionID: sub.ID,
		EventID: "evt_world", EventType: "operation.failed", Payload: `{"id":"evt_world"}`}
	if _, err := e.store.CreateDelivery(ctx, d); err != nil {
		e.t.Fatal(err)
	}
	return sub.ID, d.ID
}

// Bad input names its field.
func TestCreateSubscriptionNamesTheBadField(t *testing.T) {
	e := newTestEnv(t)
	good := func() map[string]any {
		return map[string]any{"name": "ops", "event_types": []string{"operation.failed"}, "channel": "webhook", "url": "https://hooks.example/x"}
	}
	for field, change := range map[string]func(m map[string]any){
		"event_types":            func(m map[string]any) { m["event_types"] = []string{} },
		"event_types[1]":         func(m map[string]any) { m["event_types"] = []string{"operation.failed", "operation.exploded"} },
		"url":                    func(m map[string]any) { m["url"] = "ftp://hooks.example/x" },
		"channel":                func(m map[string]any) { m["channel"] = "pager" },
		"app_ids[0]":             func(m map[string]any) { m["app_ids"] = []string{"app_nope"} },
		"label_selector":         func(m map[string]any) { m["label_selector"] = "tier in (" },
		"runner_offline_minutes": func(m map[string]any) { m["runner_offline_minutes"] = 0 },
	} {
		body := good()
		change(body)
		res := e.send("POST", "/v1/notifications/subscriptions", e.token, body)
		if res.status != 400 || res.apiError(t).Field != field {
			t.Errorf("%s: %s, want 400 naming %s", field, res, field)
		}
	}
	res := e.send("POST", "/v1/notifications/subscriptions", e.token, map[string]any{"name": "ops", "event_types": []string{"release.halted"},
		"channel": "webhook", "url": "http://hooks.example/x"})
	if res.status != 400 || !strings.Contains(string(res.body), "https") {
		t.Errorf("plain http to a public host: %s, want 400 asking for https", res)
	}
	res = e.send("POST", "/v1/notifications/subscriptions", e.token, map[string]any{"name": "runners",
		"event_types": []string{"runner.offline", "health.changed", "drift.found", "policy.denied"}, "channel": "webhook",
		"url": "https://hooks.example/x", "runner_offline_minutes": 30})
	if res.status != 201 || !strings.Contains(string(res.body), `"runner_offline_minutes":30`) {
		t.Errorf("a subscription to the new event types: %s, want 201 with runner_offline_minutes 30", res)
	}
}

// The signing secret is in the creation's answer only; a redelivery is a new
// delivery whose workflow is started.
func TestSubscriptionsThroughTheAPI(t *testing.T) {
	e := newTestEnv(t)
	var created wire.NewNotificationSubscription
	e.call("POST", "/v1/notifications/subscriptions", map[string]any{"name": "ops", "event_types": []string{"operation.failed", "release.halted"},
		"channel": "webhook", "url": "http://127.0.0.1:9/hook", "label_selector": "tier=gold"}, 201, &created)
	if !strings.HasPrefix(created.Secret, "whsec_") || !created.Enabled || created.LabelSelector != "tier=gold" {
		t.Fatalf("created %+v", created)
	}
	for _, path := range []string{"/v1/notifications/subscriptions", "/v1/notifications/subscriptions/" + created.ID} {
		if res := e.call("GET", path, nil, 200, nil); strings.Contains(string(res.body), created.Secret) {
			t.Fatalf("GET %s shows the secret: %s", path, res.body)
		}
	}
	var patched wire.NotificationSubscription
	e.call("PATCH", "/v1/notifications/subscriptions/"+created.ID, map[string]any{"enabled": false, "event_types": []string{"operation.succeeded"}}, 200, &patched)
	if patched.Enabled || len(patched.EventTypes) != 1 || patched.Name != "ops" || patched.LabelSelector != "tier=gold" {
		t.Fatalf("patched %+v", patched)
	}
	if res := e.send("PATCH", "/v1/notifications/subscriptions/"+created.ID, e.token, map[string]any{"url": "gopher://x"}); res.status != 400 || res.apiError(t).Field != "url" {
		t.Fatalf("a bad URL in a patch: %s", res)
	}

	var slack wire.NewNotificationSubscription
	e.call("POST", "/v1/notifications/subscriptions", map[string]any{"name": "chat", "event_types": []string{"release.halted"},
		"channel": "slack", "url": "https://hooks.slack.test/services/T0/B0/sekrit"}, 201, &slack)
	if res := e.call("GET", "/v1/notifications/subscriptions/"+slack.ID, nil, 200, nil); strings.Contains(string(res.body), "sekrit") ||
		slack.Secret != "" || strings.Contains(slack.URL, "sekrit") {
		t.Fatalf("a Slack webhook's URL shown whole: %s / %+v", res.body, slack)
	}

	subID, first := e.notificationWorld()
	var again wire.NotificationDelivery
	e.call("POST", "/v1/notifications/deliveries/"+first+"/redeliver", nil, 202, &again)
	if again.ID == first || again.EventID != "evt_world" || again.State != store.DeliveryPending {
		t.Fatalf("redelivered as %+v", again)
	}
	if got := e.ops.startedDeliveries(); len(got) != 1 || got[0] != e.org.ID+"/"+again.ID {
		t.Fatalf("started deliveries %v, want %s", got, again.ID)
	}
	var list wire.NotificationDeliveryList
	e.call("GET", "/v1/notifications/subscriptions/"+subID+"/deliveries", nil, 200, &list)
	if len(list.Deliveries) != 2 {
		t.Fatalf("deliveries %+v, want the first and the redelivery", list.Deliveries)
	}
	e.call("DELETE", "/v1/notifications/subscriptions/"+subID, nil, 204, nil)
	e.call("GET", "/v1/notifications/subscriptions/"+subID, nil, 404, nil)
	e.call("POST", "/v1/notifications/deliveries/"+first+"/redeliver", nil, 404, nil)
}
