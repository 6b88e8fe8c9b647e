package wire

import "time"

// NotificationSubscription sends the org's events of some types, for some
// apps and installs, to a webhook or a Slack incoming webhook. Never its
// signing secret (shown once, at creation).
type NotificationSubscription struct {
	ID   string `json:"id" required:"true"`
	Name string `json:"name" required:"true"`
	// operation.succeeded, operation.failed, operation.waiting_for_approval, release.finished, release.halted,
	// policy.denied, drift.found, runner.offline, health.changed
	EventTypes []string `json:"event_types" required:"true"`
	// only events of these apps; empty: every app
	AppIDs []string `json:"app_ids" required:"true"`
	// only events of installs whose labels match (Kubernetes selector syntax, e.g. "tier=gold,region in (eu,us)");
	// a release's events have no install and never match one
	LabelSelector string `json:"label_selector,omitempty"`
	// webhook (a signed JSON POST) or slack (a {"text": …} POST)
	Channel string `json:"channel" required:"true"`
	// a Slack webhook's shows its host only (its path is its secret)
	URL     string `json:"url" required:"true"`
	Enabled bool   `json:"enabled" required:"true"`
	// runner.offline is sent once an install's runner is offline this many minutes
	RunnerOfflineMinutes int       `json:"runner_offline_minutes" required:"true"`
	CreatedAt            time.Time `json:"created_at" required:"true"`
	UpdatedAt            time.Time `json:"updated_at" required:"true"`
}

// NewNotificationSubscription is a subscription just made, with a webhook's
// signing secret: the only answer that shows it.
type NewNotificationSubscription struct {
	NotificationSubscription
	// the webhook's signing secret (HMAC-SHA256 key of Outpost-Signature); shown only here
	Secret string `json:"secret,omitempty"`
}

// NotificationSubscriptionList is the org's subscriptions.
type NotificationSubscriptionList struct {
	Subscriptions []NotificationSubscription `json:"subscriptions" required:"true"`
}

// CreateNotificationSubscriptionRequest makes a subscription; the server
// makes a webhook's signing secret.
type CreateNotificationSubscriptionRequest struct {
	Name          string   `json:"name" required:"true"`
	EventTypes    []string `json:"event_types" required:"true"`
	AppIDs        []string `json:"app_ids,omitempty"`
	LabelSelector string   `json:"label_selector,omitempty"`
	// webhook or slack
	Channel string `json:"channel" required:"true"`
	// https:// (http:// only to a loopback address)
	URL string `json:"url" required:"true"`
	// default true
	Enabled *bool `json:"enabled,omitempty"`
	// runner.offline is sent once an install's runner is offline this many minutes (1 to 10079; default 10)
	RunnerOfflineMinutes *int     `json:"runner_offline_minutes,omitempty"`
	_                    struct{} `additionalProperties:"false"`
}

// PatchNotificationSubscriptionRequest changes the fields it sets.
type PatchNotificationSubscriptionRequest struct {
	Name          *string   `json:"name,omitempty"`
	EventTypes    *[]string `json:"event_types,omitempty"`
	AppIDs        *[]string `json:"app_ids,omitempty"`
	LabelSelector *string   `json:"label_selector,omitempty"`
	URL           *string   `json:"url,omitempty"`
	Enabled       *bool     `json:"enabled,omitempty"`
	// 1 to 10079
	RunnerOfflineMinutes *int     `json:"runner_offline_minutes,omitempty"`
	_                    struct{} `additionalProperties:"false"`
}

// NotificationDelivery is one event sent to one subscription, with its tries.
type NotificationDelivery struct {
	ID             string `json:"id" required:"true"`
	SubscriptionID string `json:"subscription_id" required:"true"`
	EventID        string `json:"event_id" required:"true"`
	EventType      string `json:"event_type" required:"true"`
	// pending (being tried), delivered or failed (every try failed)
	State     string                `json:"state" required:"true"`
	Attempts  []NotificationAttempt `json:"attempts" required:"true"`
	CreatedAt time.Time             `json:"created_at" required:"true"`
	UpdatedAt time.Time             `json:"updated_at" required:"true"`
}

// NotificationAttempt is one try of a delivery.
type NotificationAttempt struct {
	Attempt int `json:"attempt" required:"true"`
	// the receiver's answer; left out when it gave none
	StatusCode int `json:"status_code,omitempty"`
	// why the try failed (no answer, or an answer other than 2xx)
	Error string    `json:"error,omitempty"`
	At    time.Time `json:"at" required:"true"`
}

// NotificationDeliveryList is a subscription's deliveries, newest first.
type NotificationDeliveryList struct {
	Deliveries []NotificationDelivery `json:"deliveries" required:"true"`
}
