package migrations

import (
	"time"
)

// v33 adds the notification outbox: events written beside their cause (a
// health transition, a runner found offline, a drift check's or a policy's
// verdict) and dispatched to subscriptions by the worker; and how long a
// subscription waits before it hears of a runner offline.
var v33 = steps(
	create(&v33Event{}),
	add("notification_subscriptions", &v33Subscription{}, "RunnerOfflineMinutes"),
)

type v33Event struct {
	ID             string     `gorm:"primaryKey;size:32"`
	OrgID          string     `gorm:"size:32;not null"`
	Type           string     `gorm:"size:50;not null"`
	OfflineMinutes int        `gorm:"not null;default:0"`
	Event          string     `gorm:"type:text;not null"`
	CreatedAt      time.Time  `gorm:"not null;index:idx_notification_events_pending,where:dispatched_at IS NULL"`
	DispatchedAt   *time.Time ``
}

func (v33Event) TableName() string { return "notification_events" }

type v33Subscription struct {
	RunnerOfflineMinutes int `gorm:"not null;default:10"`
}

func (v33Subscription) TableName() string { return "notification_subscriptions" }
