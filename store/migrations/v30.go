package migrations

import (
	"time"
)

// v30 adds component health: each install component's current health as
// its runner last reported it, and the history of its changes of state.
var v30 = steps(
	create(&v30ComponentHealth{}, &v30HealthTransition{}),
)

type v30ComponentHealth struct {
	InstallID  string    `gorm:"primaryKey;size:32"`
	Component  string    `gorm:"primaryKey;size:200"`
	OrgID      string    `gorm:"size:32;not null;index"`
	State      string    `gorm:"size:20;not null"`
	Object     string    `gorm:"type:text;not null;default:''"`
	Condition  string    `gorm:"type:text;not null;default:''"`
	Since      time.Time `gorm:"not null"`
	ReportedAt time.Time `gorm:"not null"`
}

func (v30ComponentHealth) TableName() string { return "component_health" }

type v30HealthTransition struct {
	ID        int64     `gorm:"primaryKey;autoIncrement"`
	InstallID string    `gorm:"size:32;not null;index:idx_health_transitions_install_at"`
	Component string    `gorm:"size:200;not null"`
	FromState string    `gorm:"size:20;not null;default:''"`
	ToState   string    `gorm:"size:20;not null"`
	Object    string    `gorm:"type:text;not null;default:''"`
	Condition string    `gorm:"type:text;not null;default:''"`
	At        time.Time `gorm:"not null;index:idx_health_transitions_install_at"`
}

func (v30HealthTransition) TableName() string { return "health_transitions" }
