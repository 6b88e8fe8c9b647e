package contract

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
)

// WorkflowDeliverNotification delivers one event to one subscription: its
// activity POSTs, retried with backoff, and each try is recorded.
const WorkflowDeliverNotification = "DeliverNotification"

// DeliveryInput names the delivery; its payload and the subscription's URL
// and secret stay in the store.
type DeliveryInput struct {
	OrgID      string
	DeliveryID string
}

// DeliveryRetry is how a delivery is retried: 8 tries, 5s to 10m apart.
var DeliveryRetry = struct {
	Attempts        int32
	Initial, MaxGap time.Duration
}{8, 5 * time.Second, 10 * time.Minute}

// NotifyWorkflowID is the ID of a delivery's workflow, e.g.
// "org/org_1/notify/ndl_123".
func NotifyWorkflowID(orgID, deliveryID string) string {
	return "org/" + orgID + "/notify/" + deliveryID
}

// NotificationEvent is what happened, as a webhook receives it (its JSON
// body): ids, a one-line summary and dashboard links; never a secret, an
// input or an output value.
type NotificationEvent struct {
	ID          string            `json:"id"`
	Type        string            `json:"type"`
	Time        time.Time         `json:"time"`
	OrgID       string            `json:"org_id"`
	AppID       string            `json:"app_id,omitempty"`
	InstallID   string            `json:"install_id,omitempty"`
	OperationID string            `json:"operation_id,omitempty"`
	ReleaseID   string            `json:"release_id,omitempty"`
	RunnerID    string            `json:"runner_id,omitempty"`
	Summary     string            `json:"summary"`
	Links       map[string]string `json:"links,omitempty"`
}

// Event types a subscription may ask for.
const (
	EventOperationSucceeded = "operation.succeeded"
	EventOperationFailed    = "operation.failed"
	EventOperationApproval  = "operation.waiting_for_approval"
	EventReleaseFinished    = "release.finished"
	EventReleaseHalted      = "release.halted"
	EventPolicyDenied       = "policy.denied"
	EventDriftFound         = "drift.found"
	EventRunnerOffline      = "runner.offline"
	EventHealthChanged      = "health.changed"
)

// EventTypes lists every event type.
var EventTypes = []string{EventOperationSucceeded, EventOperationFailed, EventOperationApproval,
	EventReleaseFinished, EventReleaseHalted, EventPolicyDenied, EventDriftFound, EventRunnerOffline, EventHealthChanged}

// DefaultRunnerOfflineMinutes is how long an install's runner is offline
// before a subscription that does not say hears of it (runner.offline).
const DefaultRunnerOfflineMinutes = 10

// EventID names what happened: the same happening, the same ID.
func EventID(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return "evt_" + hex.EncodeToString(sum[:])[:20]
}
