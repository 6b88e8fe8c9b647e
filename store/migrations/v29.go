package migrations

import (
	"time"
)

// v29 adds runbook runs: one run of an install's runbook
// (runbooks/<name>.toml) with its inputs (the sensitive ones sealed), and
// its steps, each an action run, an operation or an approval gate.
var v29 = steps(
	create(&v29RunbookRun{}, &v29RunbookRunStep{}),
)

type v29RunbookRun struct {
	ID              string `gorm:"primaryKey;size:32"`
	OrgID           string `gorm:"size:32;not null;index"`
	InstallID       string `gorm:"size:32;not null;index:idx_runbook_runs_install_runbook"`
	Runbook         string `gorm:"size:100;not null;index:idx_runbook_runs_install_runbook"`
	ConfigVersion   int    `gorm:"not null"`
	Inputs          string `gorm:"type:text;not null;default:''"`
	SensitiveInputs string `gorm:"type:text;not null;default:''"`
	WorkflowID      string `gorm:"size:300;not null"`
	Status          string `gorm:"size:20;not null"`
	StartedBy       string `gorm:"size:200;not null;default:''"`
	StartedByUser   string `gorm:"size:32;not null;default:''"`
	Error           string `gorm:"type:text;not null;default:''"`
	CreatedAt       time.Time
	FinishedAt      *time.Time
}

func (v29RunbookRun) TableName() string { return "runbook_runs" }

type v29RunbookRunStep struct {
	RunID       string `gorm:"primaryKey;size:32"`
	StepIndex   int    `gorm:"primaryKey;autoIncrement:false"`
	Name        string `gorm:"size:100;not null"`
	Kind        string `gorm:"size:20;not null"`
	Target      string `gorm:"size:100;not null;default:''"`
	Status      string `gorm:"size:20;not null"`
	ActionRunID string `gorm:"size:32;not null;default:''"`
	OperationID string `gorm:"size:32;not null;default:''"`
	ApprovedBy  string `gorm:"size:200;not null;default:''"`
	Error       string `gorm:"type:text;not null;default:''"`
	StartedAt   *time.Time
	FinishedAt  *time.Time
}

func (v29RunbookRunStep) TableName() string { return "runbook_run_steps" }
