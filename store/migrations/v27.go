package migrations

import (
	"time"
)

// v27 adds notifications: an org's subscriptions (which events, for which
// apps and installs, to which webhook or Slack URL, with a sealed signing
// secret), each delivery of an event to a subscription, and its attempts.
var v27 = steps(
	create(&v27Subscription{}, &v27Delivery{}, &v27Attempt{}),
)

type v27Subscription struct {
	ID            string `gorm:"primaryKey;size:32"`
	OrgID         string `gorm:"size:32;not null;index"`
	Name          string `gorm:"size:200;not null"`
	EventTypes    string `gorm:"type:text;not null"`
	AppIDs        string `gorm:"type:text;not null"`
	LabelSelector string `gorm:"type:text;not null;default:''"`
	Channel       string `gorm:"size:20;not null"`
	URL           string `gorm:"type:text;not null"`
	Secret        string `gorm:"type:text;not null;default:''"`
	Enabled       bool   `gorm:"not null;default:true"`
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

func (v27Subscription) TableName() string { return "notification_subscriptions" }

type v27Delivery struct {
	ID             string `gorm:"primaryKey;size:32"`
	OrgID          string `gorm:"size:32;not null"`
	SubscriptionID string `gorm:"size:32;not null;index"`
	EventID        string `gorm:"size:32;not null"`
	EventType      string `gorm:"size:50;not null"`
	Payload        string `gorm:"type:text;not null"`
	State          string `gorm:"size:20;not null"`
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

func (v27Delivery) TableName() string { return "notification_deliveries" }

type v27Attempt struct {
	DeliveryID string    `gorm:"primaryKey;size:32"`
	Attempt    int       `gorm:"primaryKey;autoIncrement:false"`
	StatusCode int       `gorm:"not null;default:0"`
	Error      string    `gorm:"type:text;not null;default:''"`
	At         time.Time `gorm:"not null"`
}

func (v27Attempt) TableName() string { return "notification_attempts" }
