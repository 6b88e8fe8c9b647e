package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
)

// Operation kinds, as the contract defines them (named here too for the
// store's callers).
const (
	OpProvision         = contract.OpProvision
	OpDeprovision       = contract.OpDeprovision
	OpReprovision       = contract.OpReprovision
	OpDeployComponent   = contract.OpDeployComponent
	OpTeardownComponent = contract.OpTeardownComponent
	OpUpdateInputs      = contract.OpUpdateInputs
	OpDeployConfig      = contract.OpDeployConfig
	OpDriftCheck        = contract.OpDriftCheck
	OpReconcileDrift    = contract.OpReconcileDrift
)

// bringsToVersion says an operation of kind that succeeds (not plan-only)
// brings the install to its config version.
func bringsToVersion(kind string) bool {
	return kind == OpProvision || kind == OpReprovision || kind == OpDeployConfig
}

// InstallOperation is one mutating operation on an install (a workflow).
type InstallOperation struct {
	ID             string          `gorm:"primaryKey;size:32" json:"id"`
	OrgID          string          `gorm:"size:32;not null;index" json:"org_id"`
	InstallID      string          `gorm:"size:32;not null;index" json:"install_id"`
	Kind           string          `gorm:"size:40;not null" json:"kind"`
	Component      string          `gorm:"size:200" json:"component,omitempty"`
	WithDependents bool            `json:"with_dependents,omitempty"`
	PlanOnly       bool            `json:"plan_only"`
	ApprovalMode   status.Approval `gorm:"size:20;not null" json:"approval_mode"`
	ConfigVersion  int             `json:"config_version"`
	WorkflowID     string          `gorm:"size:300;not null" json:"workflow_id"`
	Status         status.Op       `gorm:"size:30;not null" json:"status"`
	// InMaintenanceWindow: the operation waits for the install's next
	// maintenance window (until WaitingUntil, while it waits).
	InMaintenanceWindow bool       `gorm:"not null;default:false" json:"in_maintenance_window,omitempty"`
	WaitingUntil        *time.Time `json:"waiting_until,omitempty"`
	// Forget: a deprovision that lets the install go though a step cannot
	// destroy (each such step records what it left behind).
	Forget bool `gorm:"not null;default:false" json:"forget,omitempty"`
	// TriggeredBy is the operation that started this one: a reconcile_drift's
	// drift check.
	TriggeredBy string `gorm:"size:32;not null;default:''" json:"triggered_by,omitempty"`
	// Source is where it ran: "" on the install's runner, SourceOffline for
	// an offline deploy imported from its result (no workflow ran it);
	// BundleIndex is then the signed bundle it deployed.
	Source      string `gorm:"size:20;not null;default:''" json:"source,omitempty"`
	BundleIndex string `gorm:"size:100;not null;default:''" json:"bundle_index,omitempty"`
	// StartedBy is who started it: the user's name (or, for a token made
	// before users, the token's); StartedByUser the user's ID ("" for the
	// platform or such a token). WaitingReason is why it waits, while it does
	// (e.g. its runner is paused by the customer).
	StartedBy     string        `gorm:"size:200;not null;default:''" json:"started_by,omitempty"`
	StartedByUser string        `gorm:"size:32;not null;default:''" json:"-"`
	WaitingReason string        `gorm:"type:text;not null;default:''" json:"waiting_reason,omitempty"`
	Error         string        `gorm:"type:text" json:"error,omitempty"`
	CreatedAt     time.Time     `json:"created_at"`
	FinishedAt    *time.Time    `json:"finished_at,omitempty"`
	Steps         []InstallStep `gorm:"foreignKey:OperationID" json:"steps,omitempty"`
}

// InstallStep is one user-visible step of an operation: the sandbox or one
// component, planned then applied.
type InstallStep struct {
	ID          string `gorm:"primaryKey;size:32" json:"id"`
	OperationID string `gorm:"size:32;not null;uniqueIndex:idx_steps_op_name" json:"-"`
	Name        string `gorm:"size:200;not null;uniqueIndex:idx_steps_op_name" json:"name"`
	Destroy     bool   `json:"destroy"`
	// After are the steps this one runs after (in this operation: for a
	// destroy, the reverse of the components' dependencies).
	After      []string    `gorm:"serializer:json;type:text" json:"after"`
	Status     status.Step `gorm:"size:30;not null" json:"status"`
	PlanJobID  *string     `gorm:"size:32" json:"plan_job_id,omitempty"`
	ApplyJobID *string     `gorm:"size:32" json:"apply_job_id,omitempty"`
	// BuildID is the build a component step deployed; SyncJobID the job
	// that copied its artifact into the install's registry first.
	BuildID    *string `gorm:"size:32" json:"build_id,omitempty"`
	SyncJobID  *string `gorm:"size:32" json:"sync_job_id,omitempty"`
	HasChanges *bool   `json:"has_changes,omitempty"`
	Add        int     `json:"add"`
	Change     int     `json:"change"`
	Remove     int     `gorm:"column:destroy_count" json:"destroy_count"`
	PlanText   string  `gorm:"type:text" json:"plan,omitempty"`
	// Decision is what the API recorded on the step's plan ("approved",
	// "denied"; "" undecided): the workflow applies only an approved plan.
	Decision status.Decision `gorm:"size:20;not null;default:''" json:"-"`
	// DecidedBy is who recorded Decision (the user's name, or a token's made
	// before users), DecidedByUser the user's ID, DecidedAt when.
	DecidedBy     string     `gorm:"size:200;not null;default:''" json:"decided_by,omitempty"`
	DecidedByUser string     `gorm:"size:32;not null;default:''" json:"-"`
	DecidedAt     *time.Time `json:"decided_at,omitempty"`
	// Policies are what the plan policies said of the step's last plan.
	Policies []protocol.PolicyResult `gorm:"serializer:json;type:text;not null;default:''" json:"policies,omitempty"`
	// LeftBehind is what a deprovision with forget could not destroy of the
	// step (terraform resources "type.name", a helm release), once forgotten.
	LeftBehind []string `gorm:"serializer:json;type:text;not null;default:''" json:"left_behind,omitempty"`
	// RenderDigest is the digest of the job the step rendered (variables,
	// environment or values): never shown, it tells update_inputs what changed.
	RenderDigest string     `gorm:"size:80" json:"-"`
	Error        string     `gorm:"type:text" json:"error,omitempty"`
	StartedAt    *time.Time `json:"started_at,omitempty"`
	FinishedAt   *time.Time `json:"finished_at,omitempty"`
}

// AfterFind shows a step with no dependencies (or recorded before steps had
// them) as "after": [] rather than null.
func (st *InstallStep) AfterFind(*gorm.DB) error {
	if st.After == nil {
		st.After = []string{}
	}
	return nil
}

// InstallOutput is the latest outputs of an install's sandbox or of one of
// its components, as terraform reported them (sensitive ones marked).
type InstallOutput struct {
	InstallID string    `gorm:"primaryKey;size:32"`
	Name      string    `gorm:"primaryKey;size:200"` // status.SandboxStep or a component name
	Outputs   string    `gorm:"type:text;not null"`  // protocol.TerraformApplyOutputs JSON
	UpdatedAt time.Time ``
}

// InstallLock makes "one mutating operation per install at a time" a
// database fact: a row per install with a running operation or exclusive
// action run.
type InstallLock struct {
	InstallID string `gorm:"primaryKey;size:32"`
	// OperationID is the holder: an operation's ID (op_…) or an exclusive
	// action run's (act_…).
	OperationID string    `gorm:"size:32;not null"`
	CreatedAt   time.Time ``
}

// StartOperation records an operation and takes the install's lock. A
// second mutating operation while one runs is ErrConflict.
func (s *Store) StartOperation(ctx context.Context, op InstallOperation) (InstallOperation, error) {
	if op.ID == "" {
		op.ID = NewID("op")
	}
	op.Status, op.CreatedAt = status.OpRunning, s.now()
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var inst Install
		if err := tx.Where("org_id = ? AND id = ?", op.OrgID, op.InstallID).First(&inst).Error; err != nil {
			return notFound(err, "install "+op.InstallID)
		}
		if op.Kind != OpDriftCheck {
			if err := s.lockInstall(tx, inst, op.ID); err != nil {
				return err
			}
		}
		return tx.Omit("Steps").Create(&op).Error
	})
	if err != nil {
		return InstallOperation{}, fmt.Errorf("start operation: %w", err)
	}
	return op, nil
}

// lockInstall takes the install's lock for holder (an operation's or an
// exclusive action run's ID), or says what holds it (ErrConflict).
func (s *Store) lockInstall(tx *gorm.DB, inst Install, holder string) error {
	res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&InstallLock{InstallID: inst.ID, OperationID: holder, CreatedAt: s.now()})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		var l InstallLock
		tx.Where("install_id = ?", inst.ID).First(&l)
		return fmt.Errorf("install %s is busy with %s: %w", inst.Name, LockHolder(l.OperationID), ErrConflict)
	}
	return nil
}

// LockHolder names what holds an install's lock: "operation op_…" or
// "exclusive action run act_…".
func LockHolder(id string) string {
	if strings.HasPrefix(id, "act_") {
		return "exclusive action run " + id
	}
	return "operation " + id
}

// unlockInstall releases the lock holder holds, if it holds one.
func unlockInstall(tx *gorm.DB, holder string) error {
	return tx.Where("operation_id = ?", holder).Delete(&InstallLock{}).Error
}

// NewStep is a step to record: its name, and whether it destroys.
type NewStep struct {
	Name    string
	After   []string
	Destroy bool
}

// AddSteps records an operation's steps (once: a retried call adds nothing).
func (s *Store) AddSteps(ctx context.Context, opID string, steps []NewStep) error {
	rows := make([]InstallStep, len(steps))
	for i, st := range steps {
		rows[i] = InstallStep{ID: NewID("stp"), OperationID: opID, Name: st.Name, After: st.After, Destroy: st.Destroy, Status: status.StepPending}
	}
	if len(rows) == 0 {
		return nil
	}
	return s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&rows).Error
}

// FinishOperation records how an operation ended and releases the install.
// A provision, reprovision or deploy_config that succeeded (not plan-only)
// brings the install to its config version.
func (s *Store) FinishOperation(ctx context.Context, opID string, opStatus status.Op, errMsg string, installStatus status.Install) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var op InstallOperation
		if err := tx.Where("id = ?", opID).First(&op).Error; err != nil {
			return notFound(err, "operation "+opID)
		}
		return s.finishOperation(tx, op, opStatus, errMsg, installStatus)
	})
}

// finishOperation records op's end in tx (FinishOperation).
func (s *Store) finishOperation(tx *gorm.DB, op InstallOperation, opStatus status.Op, errMsg string, installStatus status.Install) error {
	opID := op.ID
	now := s.now()
	if err := update(tx.Where("id = ?", opID), &InstallOperation{Status: opStatus, Error: errMsg, FinishedAt: &now},
		"Status", "Error", "FinishedAt", "WaitingReason").Error; err != nil {
		return err
	}
	// Steps that never ran are skipped.
	if err := update(tx.Where("operation_id = ? AND status IN ?", opID, []status.Step{status.StepPending}),
		&InstallStep{Status: status.StepSkipped, FinishedAt: &now}, "Status", "FinishedAt").Error; err != nil {
		return err
	}
	inst, fields := Install{Status: installStatus, ConfigVersion: op.ConfigVersion}, []string{}
	if installStatus != "" {
		fields = append(fields, "Status")
	}
	if opStatus == status.OpSucceeded && !op.PlanOnly && bringsToVersion(op.Kind) {
		fields = append(fields, "ConfigVersion")
	}
	if err := update(tx.Where("id = ?", op.InstallID), &inst, fields...).Error; err != nil {
		return err
	}
	return tx.Where("install_id = ? AND operation_id = ?", op.InstallID, opID).Delete(&InstallLock{}).Error
}

// SetInstallStatus sets an install's status.
func (s *Store) SetInstallStatus(ctx context.Context, installID string, st status.Install) error {
	return s.db.WithContext(ctx).Model(&Install{}).Where("id = ?", installID).Update("status", st).Error
}

// SetOperationStatus sets an operation's status (e.g. waiting for runner).
func (s *Store) SetOperationStatus(ctx context.Context, opID string, st status.Op) error {
	return s.db.WithContext(ctx).Model(&InstallOperation{}).Where("id = ?", opID).Update("status", st).Error
}

// SetOperationWaitingReason sets an operation's status and why it waits
// ("" once it no longer does).
func (s *Store) SetOperationWaitingReason(ctx context.Context, opID string, st status.Op, reason string) error {
	return update(s.db.WithContext(ctx).Where("id = ?", opID), &InstallOperation{Status: st, WaitingReason: reason},
		"Status", "WaitingReason").Error
}

// UpdateStep applies a change to a step.
func (s *Store) UpdateStep(ctx context.Context, opID, name string, change StepChange) error {
	var row InstallStep
	fields := changed(change, &row)
	if len(fields) == 0 {
		return nil
	}
	res := update(s.db.WithContext(ctx).Where("operation_id = ? AND name = ?", opID, name), &row, fields...)
	if res.Error != nil {
		return fmt.Errorf("update step %s: %w", name, res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("step %s of operation %s: %w", name, opID, ErrNotFound)
	}
	return nil
}

// GetStep reads one step of an operation.
func (s *Store) GetStep(ctx context.Context, opID, name string) (InstallStep, error) {
	return first[InstallStep](s.db.WithContext(ctx), "step "+name+" of operation "+opID, "operation_id = ? AND name = ?", opID, name)
}

// GetOperation reads one of the org's operations with its steps.
func (s *Store) GetOperation(ctx context.Context, orgID, opID string) (InstallOperation, error) {
	db := s.db.WithContext(ctx).Preload("Steps", func(db *gorm.DB) *gorm.DB { return db.Order("started_at IS NULL, started_at, name") })
	return first[InstallOperation](db, "operation "+opID, "org_id = ? AND id = ?", orgID, opID)
}

// GetOperationByID reads an operation for the workflow running it, without
// its steps (GetOperation and GetStep read those): the workflow's activities
// read it at almost every step.
func (s *Store) GetOperationByID(ctx context.Context, opID string) (InstallOperation, error) {
	return first[InstallOperation](s.db.WithContext(ctx), "operation "+opID, "id = ?", opID)
}

// ListOperations lists an install's operations, newest first.
func (s *Store) ListOperations(ctx context.Context, orgID, installID string, limit int) ([]InstallOperation, error) {
	return newestOfInstall[InstallOperation](s.db.WithContext(ctx), orgID, installID, limit)
}

// SaveOutputs records the latest outputs of the sandbox or a component.
func (s *Store) SaveOutputs(ctx context.Context, installID, name, outputs string) error {
	row := InstallOutput{InstallID: installID, Name: name, Outputs: outputs, UpdatedAt: s.now()}
	return s.db.WithContext(ctx).Clauses(clause.OnConflict{UpdateAll: true}).Create(&row).Error
}

// DeleteOutputs forgets the outputs of a torn-down sandbox or component.
func (s *Store) DeleteOutputs(ctx context.Context, installID, name string) error {
	return deleteInstallRow[InstallOutput](s.db.WithContext(ctx), installID, name)
}

// ListOutputs returns the install's outputs by name.
func (s *Store) ListOutputs(ctx context.Context, installID string) (map[string]string, error) {
	return installRowsByName(s.db.WithContext(ctx), installID, func(r InstallOutput) (string, string) { return r.Name, r.Outputs })
}

// SetApprovalMode sets how an install's plans are approved.
func (s *Store) SetApprovalMode(ctx context.Context, orgID, installID, mode string) error {
	if m := status.Approval(mode); m != status.ApproveAll && m != status.Prompt {
		return fieldErr("approval_mode", "%q is not one of %s, %s", mode, status.ApproveAll, status.Prompt)
	}
	res := s.db.WithContext(ctx).Model(&Install{}).Where("org_id = ? AND id = ?", orgID, installID).Update("approval_mode", mode)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("install %s: %w", installID, ErrNotFound)
	}
	return nil
}

// ApprovalMode reads an install's approval mode.
func (s *Store) ApprovalMode(ctx context.Context, installID string) (string, error) {
	var mode string
	err := s.db.WithContext(ctx).Model(&Install{}).Where("id = ?", installID).Select("approval_mode").Scan(&mode).Error
	if err != nil {
		return "", err
	}
	if mode == "" {
		return "", errors.New("install " + installID + " not found")
	}
	return mode, nil
}
