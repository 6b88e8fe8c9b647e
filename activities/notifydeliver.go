package activities

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/store"
)

type deliveryStore interface {
	GetDelivery(ctx context.Context, orgID, id string) (store.NotificationDelivery, error)
	GetSubscription(ctx context.Context, orgID, id string) (store.NotificationSubscription, error)
	RecordAttempt(ctx context.Context, a store.NotificationAttempt) error
	FinishDelivery(ctx context.Context, id, state string) error
}

// Notifications are the activities of a delivery: one POST, and its end.
type Notifications struct {
	store  deliveryStore
	client *http.Client
}

// Sign is a webhook's signature header value: "v1=" and the hex
// HMAC-SHA256, keyed by the subscription's secret, of "<timestamp>.<body>".
func Sign(secret, timestamp string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(timestamp + "."))
	m.Write(body)
	return "v1=" + hex.EncodeToString(m.Sum(nil))
}

// DeliverNotification POSTs the delivery's event once and records the try;
// an answer other than 2xx, or none, is an error (retried by the workflow).
func (a *Notifications) DeliverNotification(ctx context.Context, deliveryID string) error {
	d, err := a.store.GetDelivery(ctx, "", deliveryID)
	if err != nil {
		return err
	}
	sub, err := a.store.GetSubscription(ctx, d.OrgID, d.SubscriptionID)
	if err != nil {
		return err
	}
	req, err := a.request(ctx, d, sub)
	if err != nil {
		return err
	}
	try := store.NotificationAttempt{DeliveryID: d.ID, Attempt: int(activity.GetInfo(ctx).Attempt)}
	res, postErr := a.client.Do(req)
	if ue, ok := errors.AsType[*url.Error](postErr); ok {
		postErr = fmt.Errorf("POST: %w", ue.Err) // not the URL: a Slack webhook's is its secret
	}
	if postErr == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
		_ = res.Body.Close()
		try.StatusCode = res.StatusCode
		if res.StatusCode/100 != 2 {
			postErr = fmt.Errorf("%s answered %s", sub.Channel, res.Status)
		}
	}
	if postErr != nil {
		try.Error = postErr.Error()
	}
	if err := a.store.RecordAttempt(ctx, try); err != nil {
		return err
	}
	return postErr
}

// request is the POST of a delivery: the event, signed, to a webhook; its
// summary and link to Slack.
func (a *Notifications) request(ctx context.Context, d store.NotificationDelivery, sub store.NotificationSubscription) (*http.Request, error) {
	body := []byte(d.Payload)
	if sub.Channel == "slack" {
		var ev contract.NotificationEvent
		if err := json.Unmarshal(body, &ev); err != nil {
			return nil, fmt.Errorf("delivery %s: %w", d.ID, err)
		}
		var err error
		if body, err = json.Marshal(map[string]string{"text": strings.TrimSpace(ev.Summary + " " + mainLink(ev))}); err != nil {
			return nil, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, sub.URL, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("delivery %s: %w", d.ID, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Outpost-Notifications")
	if sub.Channel == "webhook" {
		ts := strconv.FormatInt(time.Now().Unix(), 10)
		req.Header.Set("Outpost-Timestamp", ts)
		req.Header.Set("Outpost-Signature", Sign(sub.Secret, ts, body))
		req.Header.Set("Outpost-Event", d.EventType)
		req.Header.Set("Outpost-Delivery", d.ID)
	}
	return req, nil
}

// FinishNotification records whether the delivery was delivered.
func (a *Notifications) FinishNotification(ctx context.Context, deliveryID string, delivered bool) error {
	state := store.DeliveryFailed
	if delivered {
		state = store.DeliveryDelivered
	}
	return a.store.FinishDelivery(ctx, deliveryID, state)
}
