package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/outpost-dev/outpost/contract"
)

// The notification outbox: an event whose cause is not an activity's (a
// health report on the gateway, a runner the worker finds offline) is
// written here, in the cause's transaction when there is one, and the
// worker's dispatcher turns it into deliveries (docs/notifications.md). An
// event's row is its ID: writing it again is a no-op, and a dispatch
// interrupted is done again (deliveries have IDs of their own).

// QueuedEvent is an event waiting for (or past) its dispatch.
type QueuedEvent struct {
	ID    string `gorm:"primaryKey;size:32"`
	OrgID string `gorm:"size:32;not null"`
	Type  string `gorm:"size:50;not null"`
	// OfflineMinutes is the runner.offline threshold the event is for
	// (only the subscriptions of that threshold get it).
	OfflineMinutes int    `gorm:"not null;default:0"`
	Event          string `gorm:"type:text;not null"` // contract.NotificationEvent, without links
	CreatedAt      time.Time
	DispatchedAt   *time.Time
}

// TableName keeps the table's name by what it holds.
func (QueuedEvent) TableName() string { return "notification_events" }

// Decode is the queued event.
func (q QueuedEvent) Decode() (contract.NotificationEvent, error) {
	var ev contract.NotificationEvent
	if err := json.Unmarshal([]byte(q.Event), &ev); err != nil {
		return ev, fmt.Errorf("queued event %s: %w", q.ID, err)
	}
	return ev, nil
}

// QueueEvent writes an event to the outbox, unless no enabled subscription
// of its org asks for its type or it is there already.
func (s *Store) QueueEvent(ctx context.Context, ev contract.NotificationEvent, offlineMinutes int) error {
	return queueEvent(s.db.WithContext(ctx), ev, offlineMinutes, s.now())
}

func queueEvent(tx *gorm.DB, ev contract.NotificationEvent, offlineMinutes int, now time.Time) error {
	body, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	err = tx.Exec(`INSERT INTO notification_events (id, org_id, type, offline_minutes, event, created_at)
		SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM notification_subscriptions
			WHERE org_id = ? AND enabled AND event_types LIKE ?)
		ON CONFLICT (id) DO NOTHING`,
		ev.ID, ev.OrgID, ev.Type, offlineMinutes, string(body), now, ev.OrgID, `%"`+ev.Type+`"%`).Error
	if err != nil {
		return fmt.Errorf("queue event %s: %w", ev.ID, err)
	}
	return nil
}

// PendingEvents returns the events not yet dispatched, oldest first.
func (s *Store) PendingEvents(ctx context.Context, limit int) ([]QueuedEvent, error) {
	var rows []QueuedEvent
	err := s.db.WithContext(ctx).Where("dispatched_at IS NULL").Order("created_at, id").Limit(limit).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("pending events: %w", err)
	}
	return rows, nil
}

// EventDispatched records that an event's deliveries were made and
// started.
func (s *Store) EventDispatched(ctx context.Context, id string) error {
	now := s.now()
	return update(s.db.WithContext(ctx).Where("id = ?", id), &QueuedEvent{DispatchedAt: &now}, "DispatchedAt").Error
}

// PruneEvents deletes the events dispatched before a time.
func (s *Store) PruneEvents(ctx context.Context, before time.Time) error {
	return s.db.WithContext(ctx).Where("dispatched_at < ?", before).Delete(&QueuedEvent{}).Error
}
