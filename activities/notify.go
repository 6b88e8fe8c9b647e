package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/store"
)

// Notifications: the activities where an operation or a release ends (or a
// step waits for approval) emit an event; emit makes one delivery per
// matching subscription and starts its workflow. Event and delivery IDs are
// derived from what happened, so an activity retried emits nothing twice.

// NotifyConfig configures notifications.
type NotifyConfig struct {
	// Deliveries starts delivery workflows; nil: no notifications.
	Deliveries DeliveryStarter
	// DashboardURL is the server's public URL (links in events); "": none.
	DashboardURL string
	// PostTimeout bounds one POST (default 30s).
	PostTimeout time.Duration
}

// DeliveryStarter starts a delivery's workflow (one already started or
// ended is not an error).
type DeliveryStarter interface {
	StartDelivery(ctx context.Context, orgID, deliveryID string) error
}

type emitStore interface {
	EnabledSubscriptions(ctx context.Context, orgID, eventType string) ([]store.NotificationSubscription, error)
	CreateDelivery(ctx context.Context, d store.NotificationDelivery) (bool, error)
}

type notifier struct {
	store emitStore
	cfg   NotifyConfig
}

// eventID names what happened: the same happening, the same ID.
func eventID(parts ...string) string { return contract.EventID(parts...) }

// emit delivers ev to the org's subscriptions that match it; labels are the
// install's (nil for a release's event).
func (n *notifier) emit(ctx context.Context, ev contract.NotificationEvent, installLabels map[string]string) error {
	return n.emitTo(ctx, ev, installLabels, nil)
}

// emitTo is emit to the matching subscriptions that accept also takes
// (nil: all).
func (n *notifier) emitTo(ctx context.Context, ev contract.NotificationEvent, installLabels map[string]string,
	accept func(store.NotificationSubscription) bool) error {
	if n == nil || n.cfg.Deliveries == nil {
		return nil
	}
	subs, err := n.store.EnabledSubscriptions(ctx, ev.OrgID, ev.Type)
	if err != nil {
		return err
	}
	ev.Links = n.links(ev)
	body, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	for _, sub := range subs {
		if !matches(sub, ev, installLabels) || (accept != nil && !accept(sub)) {
			continue
		}
		d := store.NotificationDelivery{ID: store.DeliveryID(ev.ID, sub.ID), OrgID: ev.OrgID, SubscriptionID: sub.ID,
			EventID: ev.ID, EventType: ev.Type, Payload: string(body)}
		if _, err := n.store.CreateDelivery(ctx, d); err != nil {
			return err
		}
		if err := n.cfg.Deliveries.StartDelivery(ctx, ev.OrgID, d.ID); err != nil {
			return fmt.Errorf("notify %s: %w", sub.ID, err)
		}
	}
	return nil
}

// matches applies the subscription's filters: its apps, and its label
// selector (which an event of no install, a release's, never matches).
func matches(sub store.NotificationSubscription, ev contract.NotificationEvent, installLabels map[string]string) bool {
	if len(sub.AppIDs) > 0 && !slices.Contains(sub.AppIDs, ev.AppID) {
		return false
	}
	if sub.LabelSelector == "" {
		return true
	}
	sel, err := labels.Parse(sub.LabelSelector)
	if err != nil || ev.InstallID == "" {
		return false
	}
	return sel.Matches(labels.Set(installLabels))
}

// links are the dashboard's pages of the event's subjects.
func (n *notifier) links(ev contract.NotificationEvent) map[string]string {
	base := strings.TrimSuffix(n.cfg.DashboardURL, "/")
	if base == "" {
		return nil
	}
	l := map[string]string{}
	if ev.InstallID != "" {
		l["install"] = base + "/ui/#/installs/" + ev.InstallID
	}
	if ev.OperationID != "" {
		l["operation"] = l["install"] + "/operations/" + ev.OperationID
	}
	if ev.ReleaseID != "" {
		l["release"] = base + "/ui/#/apps/" + ev.AppID + "/releases"
	}
	return l
}

// mainLink is the one link a chat message carries.
func mainLink(ev contract.NotificationEvent) string {
	for _, k := range []string{"operation", "release", "install"} {
		if l := ev.Links[k]; l != "" {
			return l
		}
	}
	return ""
}
