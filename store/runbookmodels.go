package store

import (
	"time"

	"gorm.io/gorm"

	"github.com/outpost-dev/outpost/contract/status"
)

// A runbook run or step waits at an approval gate until someone approves
// it. Otherwise runs take job statuses, and steps those and ActionStepPending
// and ActionStepSkipped.
const RunbookWaitingApproval status.Job = "waiting_approval"

// RunbookRun is one run of an install's runbook (runbooks/<name>.toml of the
// config version it ran).
type RunbookRun struct {
	ID            string `gorm:"primaryKey;size:32" json:"id"`
	OrgID         string `gorm:"size:32;not null;index" json:"org_id"`
	InstallID     string `gorm:"size:32;not null;index:idx_runbook_runs_install_runbook" json:"install_id"`
	Runbook       string `gorm:"size:100;not null;index:idx_runbook_runs_install_runbook" json:"runbook"`
	ConfigVersion int    `gorm:"not null" json:"config_version"`
	// Inputs are the run's plain inputs; SensitiveInputs its secret ones,
	// sealed at rest in the sensitive_inputs column.
	Inputs          map[string]string `gorm:"serializer:json;type:text;not null;default:''" json:"inputs"`
	SensitiveInputs map[string]string `gorm:"-" json:"-"`
	SealedInputs    string            `gorm:"column:sensitive_inputs;type:text;not null;default:''" json:"-"`
	WorkflowID      string            `gorm:"size:300;not null" json:"workflow_id"`
	Status          status.Job        `gorm:"size:20;not null" json:"status"`
	StartedBy       string            `gorm:"size:200;not null;default:''" json:"started_by,omitempty"`
	StartedByUser   string            `gorm:"size:32;not null;default:''" json:"started_by_user,omitempty"`
	Error           string            `gorm:"type:text;not null;default:''" json:"error,omitempty"`
	CreatedAt       time.Time         `json:"created_at"`
	FinishedAt      *time.Time        `json:"finished_at,omitempty"`
}

// RunbookRunStep is one step of a run: an action run, an operation
// (deploy or reprovision) or an approval gate.
type RunbookRunStep struct {
	RunID     string `gorm:"primaryKey;size:32" json:"run_id"`
	StepIndex int    `gorm:"primaryKey;autoIncrement:false" json:"index"`
	Name      string `gorm:"size:100;not null" json:"name"`
	// Kind is appconfig's step kind; Target the action or component.
	Kind   string     `gorm:"size:20;not null" json:"kind"`
	Target string     `gorm:"size:100;not null;default:''" json:"target,omitempty"`
	Status status.Job `gorm:"size:20;not null" json:"status"`
	// ActionRunID is an action step's run; OperationID a deploy's or
	// reprovision's operation (the last attempt's).
	ActionRunID string     `gorm:"size:32;not null;default:''" json:"action_run_id,omitempty"`
	OperationID string     `gorm:"size:32;not null;default:''" json:"operation_id,omitempty"`
	ApprovedBy  string     `gorm:"size:200;not null;default:''" json:"approved_by,omitempty"`
	Error       string     `gorm:"type:text;not null;default:''" json:"error,omitempty"`
	StartedAt   *time.Time `json:"started_at,omitempty"`
	FinishedAt  *time.Time `json:"finished_at,omitempty"`
}

func (r *RunbookRun) head() runHead {
	return runHead{table: "runbook_runs", id: &r.ID, installID: r.InstallID, inputs: &r.Inputs, sensitive: &r.SensitiveInputs,
		sealed: &r.SealedInputs, status: &r.Status, createdAt: &r.CreatedAt}
}

// BeforeCreate seals the run's sensitive inputs with the install's key.
func (r *RunbookRun) BeforeCreate(tx *gorm.DB) error { return r.head().sealInputs(tx) }

// AfterFind opens the sensitive inputs read.
func (r *RunbookRun) AfterFind(tx *gorm.DB) error { return r.head().openInputs(tx) }

// RunbookRunDone reports whether a run has ended (a failed one may still be
// resumed).
func RunbookRunDone(r RunbookRun) bool { return r.FinishedAt != nil }
