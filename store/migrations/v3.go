package migrations

import (
	"time"
)

// v3 adds the installs' approval mode, and install operations, steps,
// outputs and the install lock.
var v3 = steps(
	add("installs", &v3Install{}, "ApprovalMode"),
	create(&v3InstallOperation{}, &v3InstallStep{}, &v3InstallOutput{}, &v3InstallLock{}),
)

// v3Install is the column v3 adds to installs.
type v3Install struct {
	ApprovalMode string `gorm:"size:20;not null;default:'approve-all'"`
}

type v3InstallOperation struct {
	ID             string `gorm:"primaryKey;size:32"`
	OrgID          string `gorm:"size:32;not null;index"`
	InstallID      string `gorm:"size:32;not null;index"`
	Kind           string `gorm:"size:40;not null"`
	Component      string `gorm:"size:200"`
	WithDependents bool
	PlanOnly       bool
	ApprovalMode   string `gorm:"size:20;not null"`
	ConfigVersion  int
	WorkflowID     string `gorm:"size:300;not null"`
	Status         string `gorm:"size:30;not null"`
	Error          string `gorm:"type:text"`
	CreatedAt      time.Time
	FinishedAt     *time.Time
}

type v3InstallStep struct {
	ID           string `gorm:"primaryKey;size:32"`
	OperationID  string `gorm:"size:32;not null;uniqueIndex:idx_steps_op_name"`
	Name         string `gorm:"size:200;not null;uniqueIndex:idx_steps_op_name"`
	Destroy      bool
	Status       string  `gorm:"size:30;not null"`
	PlanJobID    *string `gorm:"size:32"`
	ApplyJobID   *string `gorm:"size:32"`
	HasChanges   *bool
	Add          int
	Change       int
	DestroyCount int
	PlanText     string `gorm:"type:text"`
	Error        string `gorm:"type:text"`
	StartedAt    *time.Time
	FinishedAt   *time.Time
}

type v3InstallOutput struct {
	InstallID string `gorm:"primaryKey;size:32"`
	Name      string `gorm:"primaryKey;size:200"`
	Outputs   string `gorm:"type:text;not null"`
	UpdatedAt time.Time
}

type v3InstallLock struct {
	InstallID   string `gorm:"primaryKey;size:32"`
	OperationID string `gorm:"size:32;not null"`
	CreatedAt   time.Time
}

func (v3InstallOperation) TableName() string { return "install_operations" }
func (v3InstallStep) TableName() string      { return "install_steps" }
func (v3InstallOutput) TableName() string    { return "install_outputs" }
func (v3InstallLock) TableName() string      { return "install_locks" }
