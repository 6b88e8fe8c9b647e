package migrations

import (
	"time"
)

// v15 adds the audit log: one row per changing call to the control API.
var v15 = steps(
	create(&v15AuditEvent{}),
)

// v15AuditEvent is an audit_events row; idx_audit_events_org_time lists an
// org's events newest first.
type v15AuditEvent struct {
	ID         string    `gorm:"primaryKey;size:32;index:idx_audit_events_org_time,priority:3,sort:desc"`
	OrgID      string    `gorm:"size:32;not null;index:idx_audit_events_org_time,priority:1"`
	CreatedAt  time.Time `gorm:"not null;index:idx_audit_events_org_time,priority:2,sort:desc"`
	TokenID    string    `gorm:"size:32"`
	TokenName  string    `gorm:"size:200"`
	Via        string    `gorm:"size:20;not null"`
	Method     string    `gorm:"size:10;not null"`
	Route      string    `gorm:"size:200;not null"`
	Action     string    `gorm:"size:100;not null"`
	Objects    string    `gorm:"type:text"`
	Status     int       `gorm:"not null"`
	ErrorCode  string    `gorm:"size:100"`
	DurationMS int64     `gorm:"not null;default:0"`
}

func (v15AuditEvent) TableName() string { return "audit_events" }
