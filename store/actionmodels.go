package store

import (
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/outpost-dev/outpost/contract/status"
)

// An action run's steps start pending; a step after a failed one is skipped.
// Otherwise runs and steps take their job's statuses.
const (
	ActionStepPending status.Job = "pending"
	ActionStepSkipped status.Job = "skipped"
)

// ActionRun is one run of an install's action (actions/<name>.toml of the
// config version it ran): manual, cron or a hook's.
type ActionRun struct {
	ID            string `gorm:"primaryKey;size:32" json:"id"`
	OrgID         string `gorm:"size:32;not null;index" json:"org_id"`
	InstallID     string `gorm:"size:32;not null;index:idx_action_runs_install_action" json:"install_id"`
	Action        string `gorm:"size:100;not null;index:idx_action_runs_install_action" json:"action"`
	ConfigVersion int    `gorm:"not null" json:"config_version"`
	// Trigger is manual, cron, before or after (a lifecycle hook's).
	Trigger string `gorm:"size:20;not null" json:"trigger"`
	// Inputs are the run's plain inputs; SensitiveInputs its secret ones,
	// sealed at rest in the sensitive_inputs column.
	Inputs          map[string]string `gorm:"serializer:json;type:text;not null;default:''" json:"inputs"`
	SensitiveInputs map[string]string `gorm:"-" json:"-"`
	SealedInputs    string            `gorm:"column:sensitive_inputs;type:text;not null;default:''" json:"-"`
	WorkflowID      string            `gorm:"size:300;not null" json:"workflow_id"`
	// OperationID and OperationStep: the operation and its hook step that
	// started a hook's run ("" for manual and cron runs).
	OperationID   string     `gorm:"size:32;not null;default:'';index:idx_action_runs_operation" json:"operation_id,omitempty"`
	OperationStep string     `gorm:"size:200;not null;default:'';index:idx_action_runs_operation" json:"operation_step,omitempty"`
	Status        status.Job `gorm:"size:20;not null" json:"status"`
	// Exclusive: the run holds the install's lock from its record to its
	// end (an action with exclusive = true, not run as an operation's hook).
	Exclusive bool `gorm:"not null;default:false" json:"exclusive,omitempty"`
	// StartedBy names who started it (a user's or token's name, "" for a
	// schedule); StartedByUser is the user's ID.
	StartedBy     string     `gorm:"size:200;not null;default:''" json:"started_by,omitempty"`
	StartedByUser string     `gorm:"size:32;not null;default:''" json:"started_by_user,omitempty"`
	Error         string     `gorm:"type:text;not null;default:''" json:"error,omitempty"`
	CreatedAt     time.Time  `json:"created_at"`
	FinishedAt    *time.Time `json:"finished_at,omitempty"`
}

// ActionRunStep is one step of a run: one job of type action.
type ActionRunStep struct {
	RunID     string     `gorm:"primaryKey;size:32" json:"run_id"`
	StepIndex int        `gorm:"primaryKey;autoIncrement:false" json:"index"`
	Name      string     `gorm:"size:100;not null" json:"name"`
	Status    status.Job `gorm:"size:20;not null" json:"status"`
	JobID     *string    `gorm:"size:32" json:"job_id,omitempty"`
	ExitCode  *int       `json:"exit_code,omitempty"`
	// Outputs are the step's plain outputs; SensitiveOutputs its secret
	// ones, sealed at rest in the sensitive_outputs column.
	Outputs          map[string]string `gorm:"serializer:json;type:text;not null;default:''" json:"outputs"`
	SensitiveOutputs map[string]string `gorm:"-" json:"-"`
	SealedOutputs    string            `gorm:"column:sensitive_outputs;type:text;not null;default:''" json:"-"`
	Error            string            `gorm:"type:text;not null;default:''" json:"error,omitempty"`
	StartedAt        *time.Time        `json:"started_at,omitempty"`
	FinishedAt       *time.Time        `json:"finished_at,omitempty"`
}

func (r *ActionRun) head() runHead {
	return runHead{table: "action_runs", id: &r.ID, installID: r.InstallID, inputs: &r.Inputs, sensitive: &r.SensitiveInputs,
		sealed: &r.SealedInputs, status: &r.Status, createdAt: &r.CreatedAt}
}

// BeforeCreate seals the run's sensitive inputs with the install's key.
func (r *ActionRun) BeforeCreate(tx *gorm.DB) error { return r.head().sealInputs(tx) }

// AfterFind opens the sensitive inputs read.
func (r *ActionRun) AfterFind(tx *gorm.DB) error { return r.head().openInputs(tx) }

func (s *ActionRunStep) place() string {
	return fmt.Sprintf("action_run_steps.sensitive_outputs/%s/%d", s.RunID, s.StepIndex)
}

// AfterFind opens the sensitive outputs read.
func (s *ActionRunStep) AfterFind(tx *gorm.DB) (err error) {
	s.SensitiveOutputs, err = openMap(tx, s.place(), s.SealedOutputs)
	return err
}
