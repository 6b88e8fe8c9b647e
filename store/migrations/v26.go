package migrations

import (
	"time"
)

// v26 adds action runs: one run of an install's action (actions/<name>.toml),
// manual, cron or a hook's, with its inputs (the sensitive ones sealed), and
// its steps, each one job of type action, with its outputs (the sensitive
// ones sealed).
var v26 = steps(
	create(&v26ActionRun{}, &v26ActionRunStep{}),
)

type v26ActionRun struct {
	ID              string `gorm:"primaryKey;size:32"`
	OrgID           string `gorm:"size:32;not null;index"`
	InstallID       string `gorm:"size:32;not null;index:idx_action_runs_install_action"`
	Action          string `gorm:"size:100;not null;index:idx_action_runs_install_action"`
	ConfigVersion   int    `gorm:"not null"`
	Trigger         string `gorm:"size:20;not null"`
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

func (v26ActionRun) TableName() string { return "action_runs" }

type v26ActionRunStep struct {
	RunID            string  `gorm:"primaryKey;size:32"`
	StepIndex        int     `gorm:"primaryKey;autoIncrement:false"`
	Name             string  `gorm:"size:100;not null"`
	Status           string  `gorm:"size:20;not null"`
	JobID            *string `gorm:"size:32"`
	ExitCode         *int
	Outputs          string `gorm:"type:text;not null;default:''"`
	SensitiveOutputs string `gorm:"type:text;not null;default:''"`
	Error            string `gorm:"type:text;not null;default:''"`
	StartedAt        *time.Time
	FinishedAt       *time.Time
}

func (v26ActionRunStep) TableName() string { return "action_run_steps" }
