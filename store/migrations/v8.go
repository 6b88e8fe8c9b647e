package migrations

import (
	"time"
)

// v8 adds maintenance windows and drift: an install's windows, drift
// schedule and reconcile setting; an operation that waits for a window; the
// drift each check found per sandbox and component.
var v8 = steps(
	add("installs", &v8Install{}, "MaintenanceWindows", "DriftEvery", "DriftReconcile"),
	add("install_operations", &v8Operation{}, "InMaintenanceWindow", "WaitingUntil"),
	create(&v8Drift{}),
)

// v8Install is the columns v8 adds to installs.
type v8Install struct {
	MaintenanceWindows string `gorm:"type:text"`
	DriftEvery         string `gorm:"size:40;not null;default:''"`
	DriftReconcile     bool   `gorm:"not null;default:false"`
}

// v8Operation is the columns v8 adds to install_operations.
type v8Operation struct {
	InMaintenanceWindow bool `gorm:"not null;default:false"`
	WaitingUntil        *time.Time
}

type v8Drift struct {
	InstallID   string `gorm:"primaryKey;size:32"`
	Name        string `gorm:"primaryKey;size:200"`
	Drifted     bool   `gorm:"not null"`
	Since       *time.Time
	Plan        string `gorm:"type:text"`
	OperationID string `gorm:"size:32;not null"`
	CheckedAt   time.Time
}

func (v8Drift) TableName() string { return "install_drift" }
