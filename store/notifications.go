package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/outpost-dev/outpost/contract"
)

// Notifications: an org's subscriptions say which events (operation and
// release outcomes) go where (a webhook or a Slack URL); each event sent to
// a subscription is a delivery with its attempts. A webhook's signing
// secret is made here, sealed at rest with the org's data key, and given
// back only by CreateSubscription (and to the activity that signs).

// Delivery states.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// NotificationSubscription is one subscription; Secret is sealed at rest.
type NotificationSubscription struct {
	ID         string   `gorm:"primaryKey;size:32"`
	OrgID      string   `gorm:"size:32;not null;index"`
	Name       string   `gorm:"size:200;not null"`
	EventTypes []string `gorm:"serializer:json;type:text;not null"`
	// AppIDs and LabelSelector filter the events of installs (none: all).
	AppIDs        []string `gorm:"column:app_ids;serializer:json;type:text;not null"`
	LabelSelector string   `gorm:"type:text;not null;default:''"`
	Channel       string   `gorm:"size:20;not null"` // "webhook" or "slack"
	URL           string   `gorm:"column:url;type:text;not null"`
	Secret        string   `gorm:"type:text;not null;default:''" json:"-"`
	Enabled       bool     `gorm:"not null;default:true"`
	// RunnerOfflineMinutes is how long an install's runner is offline
	// before runner.offline is sent (0: contract.DefaultRunnerOfflineMinutes).
	RunnerOfflineMinutes int `gorm:"not null;default:10"`
	CreatedAt            time.Time
	UpdatedAt            time.Time
}

// TableName keeps the table's name by what it holds.
func (NotificationSubscription) TableName() string { return "notification_subscriptions" }

// OfflineMinutes is how long the subscription lets an install's runner be
// offline before it hears of it (runner.offline).
func (n NotificationSubscription) OfflineMinutes() int {
	if n.RunnerOfflineMinutes <= 0 {
		return contract.DefaultRunnerOfflineMinutes
	}
	return n.RunnerOfflineMinutes
}

func (n *NotificationSubscription) sealed(tx *gorm.DB, open bool) error {
	return sealFields(tx, n.OrgID, open, map[string]*string{"notification_subscriptions.secret/" + n.ID: &n.Secret})
}

// BeforeCreate seals the secret.
func (n *NotificationSubscription) BeforeCreate(tx *gorm.DB) error { return n.sealed(tx, false) }

// AfterCreate gives the caller its secret back.
func (n *NotificationSubscription) AfterCreate(tx *gorm.DB) error { return n.sealed(tx, true) }

// AfterFind opens the secret read.
func (n *NotificationSubscription) AfterFind(tx *gorm.DB) error { return n.sealed(tx, true) }

// SubscriptionChange is a change to a subscription: its non-nil fields.
type SubscriptionChange struct {
	Name          *string
	EventTypes    *[]string
	AppIDs        *[]string
	LabelSelector *string
	URL           *string
	Enabled       *bool
	// RunnerOfflineMinutes is its runner.offline threshold.
	RunnerOfflineMinutes *int
}

// NotificationDelivery is one event sent to one subscription. Payload is
// the event as JSON (ids, summary, links: never a secret or an output).
type NotificationDelivery struct {
	ID             string `gorm:"primaryKey;size:32"`
	OrgID          string `gorm:"size:32;not null"`
	SubscriptionID string `gorm:"size:32;not null;index"`
	EventID        string `gorm:"size:32;not null"`
	EventType      string `gorm:"size:50;not null"`
	Payload        string `gorm:"type:text;not null"`
	State          string `gorm:"size:20;not null"`
	CreatedAt      time.Time
	UpdatedAt      time.Time
	Attempts       []NotificationAttempt `gorm:"-"`
}

// TableName keeps the table's name by what it holds.
func (NotificationDelivery) TableName() string { return "notification_deliveries" }

// NotificationAttempt is one try of a delivery: the receiver's status code,
// or the error that kept it from answering.
type NotificationAttempt struct {
	DeliveryID string    `gorm:"primaryKey;size:32"`
	Attempt    int       `gorm:"primaryKey;autoIncrement:false"`
	StatusCode int       `gorm:"not null;default:0"`
	Error      string    `gorm:"type:text;not null;default:''"`
	At         time.Time `gorm:"not null"`
}

// TableName keeps the table's name by what it holds.
func (NotificationAttempt) TableName() string { return "notification_attempts" }

// DeliveryID is the delivery of an event to a subscription: the same event
// emitted twice (a retried activity) is delivered once.
func DeliveryID(eventID, subscriptionID string) string {
	sum := sha256.Sum256([]byte(eventID + "\x00" + subscriptionID))
	return "ndl_" + hex.EncodeToString(sum[:])[:20]
}

// CreateSubscription stores a subscription with a new ID and, for a
// webhook, a new signing secret; the row returned holds it in clear.
func (s *Store) CreateSubscription(ctx context.Context, sub NotificationSubscription) (NotificationSubscription, error) {
	now := s.now()
	sub.ID, sub.CreatedAt, sub.UpdatedAt, sub.Secret = NewID("nsub"), now, now, ""
	if sub.RunnerOfflineMinutes <= 0 {
		sub.RunnerOfflineMinutes = contract.DefaultRunnerOfflineMinutes
	}
	if sub.Channel == "webhook" {
		sub.Secret = newToken("whsec_")
	}
	if err := s.db.WithContext(ctx).Create(&sub).Error; err != nil {
		return NotificationSubscription{}, fmt.Errorf("create subscription %s: %w", sub.Name, err)
	}
	return sub, nil
}

// ListSubscriptions returns the org's subscriptions, oldest first.
func (s *Store) ListSubscriptions(ctx context.Context, orgID string) ([]NotificationSubscription, error) {
	var rows []NotificationSubscription
	err := s.db.WithContext(ctx).Where("org_id = ?", orgID).Order("created_at, id").Find(&rows).Error
	return rows, err
}

// GetSubscription returns one of the org's subscriptions.
func (s *Store) GetSubscription(ctx context.Context, orgID, id string) (NotificationSubscription, error) {
	var row NotificationSubscription
	if err := s.db.WithContext(ctx).Where("org_id = ? AND id = ?", orgID, id).Take(&row).Error; err != nil {
		return row, notFound(err, "subscription "+id)
	}
	return row, nil
}

// UpdateSubscription writes the change's fields.
func (s *Store) UpdateSubscription(ctx context.Context, orgID, id string, change SubscriptionChange) (NotificationSubscription, error) {
	var row NotificationSubscription
	fields := append(changed(change, &row), "UpdatedAt")
	row.UpdatedAt = s.now()
	res := update(s.db.WithContext(ctx).Where("org_id = ? AND id = ?", orgID, id), &row, fields...)
	if res.Error != nil {
		return row, res.Error
	}
	if res.RowsAffected == 0 {
		return row, fmt.Errorf("subscription %s: %w", id, ErrNotFound)
	}
	return s.GetSubscription(ctx, orgID, id)
}

// DeleteSubscription deletes a subscription with its deliveries.
func (s *Store) DeleteSubscription(ctx context.Context, orgID, id string) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Where("org_id = ? AND id = ?", orgID, id).Delete(&NotificationSubscription{})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return fmt.Errorf("subscription %s: %w", id, ErrNotFound)
		}
		sub := tx.Model(&NotificationDelivery{}).Select("id").Where("subscription_id = ?", id)
		if err := tx.Where("delivery_id IN (?)", sub).Delete(&NotificationAttempt{}).Error; err != nil {
			return err
		}
		return tx.Where("subscription_id = ?", id).Delete(&NotificationDelivery{}).Error
	})
}

// EnabledSubscriptions returns the org's enabled subscriptions to an event
// type; the caller filters them by app and labels.
func (s *Store) EnabledSubscriptions(ctx context.Context, orgID, eventType string) ([]NotificationSubscription, error) {
	var rows, out []NotificationSubscription
	if err := s.db.WithContext(ctx).Where("org_id = ? AND enabled", orgID).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("subscriptions of %s: %w", orgID, err)
	}
	for _, r := range rows {
		for _, t := range r.EventTypes {
			if t == eventType {
				out = append(out, r)
				break
			}
		}
	}
	return out, nil
}

// CreateDelivery stores a pending delivery; one of the same ID is kept as
// it is (created reports which).
func (s *Store) CreateDelivery(ctx context.Context, d NotificationDelivery) (created bool, err error) {
	d.State, d.CreatedAt, d.UpdatedAt = DeliveryPending, s.now(), s.now()
	res := s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&d)
	if res.Error != nil {
		return false, fmt.Errorf("create delivery %s: %w", d.ID, res.Error)
	}
	return res.RowsAffected == 1, nil
}

// GetDelivery returns a delivery with its attempts ("" orgID: any org's).
func (s *Store) GetDelivery(ctx context.Context, orgID, id string) (NotificationDelivery, error) {
	q := s.db.WithContext(ctx).Where("id = ?", id)
	if orgID != "" {
		q = q.Where("org_id = ?", orgID)
	}
	var d NotificationDelivery
	if err := q.Take(&d).Error; err != nil {
		return d, notFound(err, "delivery "+id)
	}
	err := s.db.WithContext(ctx).Where("delivery_id = ?", id).Order("attempt").Find(&d.Attempts).Error
	return d, err
}

// ListDeliveries returns a subscription's deliveries, newest first, each
// with its attempts.
func (s *Store) ListDeliveries(ctx context.Context, orgID, subscriptionID string, limit int) ([]NotificationDelivery, error) {
	var rows []NotificationDelivery
	err := s.db.WithContext(ctx).Where("org_id = ? AND subscription_id = ?", orgID, subscriptionID).
		Order("created_at DESC, id DESC").Limit(limit).Find(&rows).Error
	if err != nil || len(rows) == 0 {
		return rows, err
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	var atts []NotificationAttempt
	if err := s.db.WithContext(ctx).Where("delivery_id IN ?", ids).Order("attempt").Find(&atts).Error; err != nil {
		return nil, err
	}
	for i := range rows {
		for _, a := range atts {
			if a.DeliveryID == rows[i].ID {
				rows[i].Attempts = append(rows[i].Attempts, a)
			}
		}
	}
	return rows, nil
}

// RecordAttempt records one try of a delivery (the same try again: kept).
func (s *Store) RecordAttempt(ctx context.Context, a NotificationAttempt) error {
	a.At = s.now()
	return s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&a).Error
}

// FinishDelivery records a delivery's final state.
func (s *Store) FinishDelivery(ctx context.Context, id, state string) error {
	return update(s.db.WithContext(ctx).Where("id = ?", id),
		&NotificationDelivery{State: state, UpdatedAt: s.now()}, "State", "UpdatedAt").Error
}
