package api

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/store"
)

// Notification subscriptions and their deliveries (docs/notifications.md).

func (s *Server) createSubscription(c echo.Context) error {
	var req wire.CreateNotificationSubscriptionRequest
	if err := apierr.Bind(c, &req); err != nil {
		return err
	}
	if req.Channel != "webhook" && req.Channel != "slack" {
		return apierr.Invalid("channel", "%q is not a channel: webhook or slack", req.Channel)
	}
	if strings.TrimSpace(req.Name) == "" {
		return apierr.Invalid("name", "a subscription needs a name")
	}
	ctx, org := c.Request().Context(), orgID(c)
	if err := s.checkSubscription(c, req.EventTypes, req.AppIDs, req.LabelSelector, req.URL); err != nil {
		return err
	}
	offline, err := checkOfflineMinutes(req.RunnerOfflineMinutes)
	if err != nil {
		return err
	}
	sub, err := s.store.CreateSubscription(ctx, store.NotificationSubscription{OrgID: org, Name: req.Name,
		EventTypes: req.EventTypes, AppIDs: nonNil(req.AppIDs), LabelSelector: req.LabelSelector, Channel: req.Channel,
		URL: req.URL, Enabled: req.Enabled == nil || *req.Enabled, RunnerOfflineMinutes: offline})
	if err != nil {
		return err
	}
	noteObject(ctx, "subscription_id", sub.ID)
	// The only answer that holds the signing secret.
	return c.JSON(http.StatusCreated, wire.NewNotificationSubscription{NotificationSubscription: subscriptionView(sub), Secret: sub.Secret})
}

// maxOfflineMinutes is the longest runner_offline_minutes: a week (the
// worker tells of runners offline no longer, worker.OfflineHorizon).
const maxOfflineMinutes = 7 * 24 * 60

// checkOfflineMinutes checks runner_offline_minutes (nil: the default).
func checkOfflineMinutes(m *int) (int, error) {
	if m == nil {
		return contract.DefaultRunnerOfflineMinutes, nil
	}
	if *m < 1 || *m >= maxOfflineMinutes {
		return 0, apierr.Invalid("runner_offline_minutes", "%d is not between 1 and %d", *m, maxOfflineMinutes-1)
	}
	return *m, nil
}

// checkSubscription checks a subscription's filters and URL; the 400 names
// the field.
func (s *Server) checkSubscription(c echo.Context, types, appIDs []string, selector, rawURL string) error {
	if len(types) == 0 {
		return apierr.Invalid("event_types", "name at least one event type (%s)", strings.Join(contract.EventTypes, ", "))
	}
	for i, t := range types {
		if !slices.Contains(contract.EventTypes, t) {
			return apierr.Invalid(fmt.Sprintf("event_types[%d]", i), "%q is not an event type (%s)", t, strings.Join(contract.EventTypes, ", "))
		}
	}
	for i, id := range appIDs {
		if _, err := s.store.GetApp(c.Request().Context(), orgID(c), id); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return apierr.Invalid(fmt.Sprintf("app_ids[%d]", i), "no app %s in this org", id)
			}
			return err
		}
	}
	if _, err := labels.Parse(selector); err != nil {
		return apierr.Invalid("label_selector", "%q is not a label selector: %v", selector, err)
	}
	return checkHookURL(rawURL)
}

// checkHookURL wants https, or http to a loopback address (a receiver on
// the same host, tests).
func checkHookURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return apierr.Invalid("url", "%q is not an absolute URL", raw)
	}
	ip := net.ParseIP(u.Hostname())
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && (u.Hostname() == "localhost" || ip != nil && ip.IsLoopback()):
	default:
		return apierr.Invalid("url", "%q: the scheme must be https (http only to a loopback address)", raw)
	}
	if u.User != nil {
		return apierr.Invalid("url", "the URL must not hold a user or password")
	}
	return nil
}

func (s *Server) listSubscriptions(c echo.Context) error {
	return listOfOrg(c, s.store.ListSubscriptions, func(subs []store.NotificationSubscription) wire.NotificationSubscriptionList {
		return wire.NotificationSubscriptionList{Subscriptions: views(subs, subscriptionView)}
	})
}

func (s *Server) getSubscription(c echo.Context) error {
	return getByID(c, s.store.GetSubscription, subscriptionView)
}

func (s *Server) patchSubscription(c echo.Context) error {
	var req wire.PatchNotificationSubscriptionRequest
	if err := apierr.Bind(c, &req); err != nil {
		return err
	}
	ctx, org := c.Request().Context(), orgID(c)
	cur, err := s.store.GetSubscription(ctx, org, c.Param("id"))
	if err != nil {
		return err
	}
	if req.Name != nil && strings.TrimSpace(*req.Name) == "" {
		return apierr.Invalid("name", "a subscription needs a name")
	}
	next := cur
	setIf(&next.EventTypes, req.EventTypes)
	setIf(&next.AppIDs, req.AppIDs)
	setIf(&next.LabelSelector, req.LabelSelector)
	setIf(&next.URL, req.URL)
	if err := s.checkSubscription(c, next.EventTypes, next.AppIDs, next.LabelSelector, next.URL); err != nil {
		return err
	}
	if req.RunnerOfflineMinutes != nil {
		if _, err := checkOfflineMinutes(req.RunnerOfflineMinutes); err != nil {
			return err
		}
	}
	sub, err := s.store.UpdateSubscription(ctx, org, cur.ID, store.SubscriptionChange{Name: req.Name, EventTypes: req.EventTypes,
		AppIDs: req.AppIDs, LabelSelector: req.LabelSelector, URL: req.URL, Enabled: req.Enabled,
		RunnerOfflineMinutes: req.RunnerOfflineMinutes})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, subscriptionView(sub))
}

func setIf[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

func (s *Server) deleteSubscription(c echo.Context) error {
	if err := s.store.DeleteSubscription(c.Request().Context(), orgID(c), c.Param("id")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) listDeliveries(c echo.Context) error {
	ctx, org := c.Request().Context(), orgID(c)
	limit, err := queryInt(c, "limit", 50, 1, 200)
	if err != nil {
		return err
	}
	sub, err := s.store.GetSubscription(ctx, org, c.Param("id"))
	if err != nil {
		return err
	}
	ds, err := s.store.ListDeliveries(ctx, org, sub.ID, limit)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.NotificationDeliveryList{Deliveries: views(ds, deliveryView)})
}

// redeliver sends a delivery's event again, as a new delivery.
func (s *Server) redeliver(c echo.Context) error {
	ctx, org := c.Request().Context(), orgID(c)
	old, err := s.store.GetDelivery(ctx, org, c.Param("id"))
	if err != nil {
		return err
	}
	d := store.NotificationDelivery{ID: store.NewID("ndl"), OrgID: org, SubscriptionID: old.SubscriptionID,
		EventID: old.EventID, EventType: old.EventType, Payload: old.Payload}
	if _, err := s.store.CreateDelivery(ctx, d); err != nil {
		return err
	}
	noteObject(ctx, "delivery_id", d.ID)
	if err := s.ops.StartDelivery(ctx, org, d.ID); err != nil {
		return opsFailed("starting the delivery", err)
	}
	d, err = s.store.GetDelivery(ctx, org, d.ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, deliveryView(d))
}

func subscriptionView(n store.NotificationSubscription) wire.NotificationSubscription {
	return wire.NotificationSubscription{ID: n.ID, Name: n.Name, EventTypes: nonNil(n.EventTypes), AppIDs: nonNil(n.AppIDs),
		LabelSelector: n.LabelSelector, Channel: n.Channel, URL: shownURL(n), Enabled: n.Enabled,
		RunnerOfflineMinutes: n.OfflineMinutes(), CreatedAt: n.CreatedAt, UpdatedAt: n.UpdatedAt}
}

// shownURL is a webhook's URL, or a Slack webhook's host only: its path is
// its secret.
func shownURL(n store.NotificationSubscription) string {
	u, err := url.Parse(n.URL)
	if n.Channel != "slack" || err != nil {
		return n.URL
	}
	return u.Scheme + "://" + u.Host + "/…"
}

func deliveryView(d store.NotificationDelivery) wire.NotificationDelivery {
	return wire.NotificationDelivery{ID: d.ID, SubscriptionID: d.SubscriptionID, EventID: d.EventID, EventType: d.EventType,
		State: d.State, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt,
		Attempts: views(nonNil(d.Attempts), func(a store.NotificationAttempt) wire.NotificationAttempt {
			return wire.NotificationAttempt{Attempt: a.Attempt, StatusCode: a.StatusCode, Error: a.Error, At: a.At}
		})}
}
