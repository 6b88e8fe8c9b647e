package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// InstallDrift is what the last drift check (or a later apply) found of an
// install's sandbox or component: drifted, since when, and the plan that
// would bring it back.
type InstallDrift struct {
	InstallID string `gorm:"primaryKey;size:32" json:"-"`
	Name      string `gorm:"primaryKey;size:200" json:"name"` // status.SandboxStep or a component
	Drifted   bool   `gorm:"not null" json:"drifted"`
	// Since is when a check first found it drifted (nil when it is not).
	Since *time.Time `json:"since,omitempty"`
	Plan  string     `gorm:"type:text" json:"plan,omitempty"`
	// OperationID is the drift check (or the operation whose apply
	// cleared it) that recorded this.
	OperationID string    `gorm:"size:32;not null" json:"operation_id"`
	CheckedAt   time.Time `json:"checked_at"`
}

// TableName keeps the table's name singular, as "drift" is.
func (InstallDrift) TableName() string { return "install_drift" }

// RecordDrift records what a drift check (begun at began) found of one
// step: drifted (with the plan) or not. A step that stays drifted keeps its
// Since; what was recorded after the check began (an apply's clearing) wins.
func (s *Store) RecordDrift(ctx context.Context, installID, name, opID string, began time.Time, drifted bool, plan string) error {
	now := s.now()
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		row := InstallDrift{InstallID: installID, Name: name, Drifted: drifted, OperationID: opID, CheckedAt: now}
		var prev InstallDrift
		found := tx.Where("install_id = ? AND name = ?", installID, name).First(&prev).Error == nil
		if found && prev.OperationID != opID && prev.CheckedAt.After(began) {
			return nil
		}
		if drifted {
			row.Plan, row.Since = plan, &now
			if found && prev.Drifted && prev.Since != nil {
				row.Since = prev.Since
			}
		}
		return tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&row).Error
	})
}

// ClearDrift records that an operation applied (or destroyed) a step: it
// no longer drifts.
func (s *Store) ClearDrift(ctx context.Context, installID, name, opID string) error {
	res := update(s.db.WithContext(ctx).Where("install_id = ? AND name = ?", installID, name),
		&InstallDrift{OperationID: opID, CheckedAt: s.now()}, "Drifted", "Since", "Plan", "OperationID", "CheckedAt")
	// Its checked_at, now, makes a check begun before this apply record
	// nothing (RecordDrift): what that check planned is older news.
	if res.Error != nil {
		return fmt.Errorf("clear drift of %s: %w", name, res.Error)
	}
	return nil
}

// ListDrift is what the checks found of the install's sandbox and
// components, by name.
func (s *Store) ListDrift(ctx context.Context, installID string) ([]InstallDrift, error) {
	out := []InstallDrift{}
	err := s.db.WithContext(ctx).Where("install_id = ?", installID).Order("name").Find(&out).Error
	return out, err
}

// SetDriftSettings sets the install's drift schedule interval ("": none)
// and whether drift found is reconciled.
func (s *Store) SetDriftSettings(ctx context.Context, orgID, installID, every string, reconcile bool) error {
	return s.updateInstall(ctx, orgID, installID, &Install{DriftEvery: every, DriftReconcile: reconcile}, "DriftEvery", "DriftReconcile")
}

// RunningDriftChecks are the install's drift checks that have not ended.
func (s *Store) RunningDriftChecks(ctx context.Context, installID string) ([]InstallOperation, error) {
	var out []InstallOperation
	err := s.db.WithContext(ctx).Where("install_id = ? AND kind = ? AND finished_at IS NULL", installID, OpDriftCheck).Find(&out).Error
	return out, err
}

// OperationOfWorkflow finds the operation a workflow run recorded (the
// drift check a schedule started).
func (s *Store) OperationOfWorkflow(ctx context.Context, workflowID string) (InstallOperation, error) {
	return first[InstallOperation](s.db.WithContext(ctx), "operation of workflow "+workflowID, "workflow_id = ?", workflowID)
}
