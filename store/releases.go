package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
)

// Release brings a set of an app's installs to a config version, in
// batches; a rollback (RollbackOf) brings each back to the version it ran
// before.
type Release struct {
	ID               string `gorm:"primaryKey;size:32" json:"id"`
	OrgID            string `gorm:"size:32;not null;index" json:"org_id"`
	AppID            string `gorm:"size:32;not null;index" json:"app_id"`
	ConfigVersion    int    `gorm:"not null;default:0" json:"config_version"`
	RollbackOf       string `gorm:"size:32" json:"rollback_of,omitempty"`
	Selector         string `gorm:"type:text" json:"selector"`
	BatchSize        int    `gorm:"not null" json:"batch_size"`
	PauseMS          int64  `gorm:"not null;default:0" json:"-"`
	FailureThreshold int    `gorm:"not null" json:"failure_threshold"`
	// SoakMS: how long a batch must stay healthy after its deploys (0: no
	// health gate); OnUnhealthy: what a batch that does not does
	// (contract.OnUnhealthyHalt, the default, or OnUnhealthyRollback).
	SoakMS      int64            `gorm:"not null;default:0" json:"-"`
	OnUnhealthy string           `gorm:"size:20;not null;default:''" json:"on_unhealthy,omitempty"`
	WorkflowID  string           `gorm:"size:200;not null" json:"workflow_id"`
	Status      status.Release   `gorm:"size:20;not null" json:"status"`
	Paused      bool             `gorm:"not null;default:false" json:"paused"`
	Error       string           `gorm:"type:text" json:"error,omitempty"`
	CreatedAt   time.Time        `json:"created_at"`
	FinishedAt  *time.Time       `json:"finished_at"`
	Installs    []ReleaseInstall `gorm:"foreignKey:ReleaseID" json:"-"`
}

// ReleaseInstall is one install of a release: its batch, the version it ran
// before and the one the release brings it to, its deploy_config operation.
type ReleaseInstall struct {
	ReleaseID   string `gorm:"primaryKey;size:32" json:"-"`
	InstallID   string `gorm:"primaryKey;size:32" json:"install_id"`
	InstallName string `gorm:"size:200;not null" json:"install_name"`
	Batch       int    `gorm:"not null" json:"batch"`
	FromVersion int    `gorm:"not null;default:0" json:"from_version"`
	ToVersion   int    `gorm:"not null" json:"to_version"`
	OperationID string `gorm:"size:32" json:"operation_id,omitempty"`
	// RollbackOperationID: the deploy_config that brought it back to
	// FromVersion when its batch failed the health gate.
	RollbackOperationID string                `gorm:"size:32;not null;default:''" json:"rollback_operation_id,omitempty"`
	Status              status.ReleaseInstall `gorm:"size:20;not null" json:"status"`
	Error               string                `gorm:"type:text" json:"error,omitempty"`
	WaitingUntil        *time.Time            `json:"waiting_until,omitempty"`
	UpdatedAt           time.Time             `json:"updated_at"`
}

// CreateRelease records a release and its installs; a release of the same
// app that has not ended is ErrConflict.
func (s *Store) CreateRelease(ctx context.Context, r Release) (Release, error) {
	r.ID, r.Status, r.CreatedAt = NewID("rel"), status.ReleaseRunning, s.now()
	r.WorkflowID = contract.ReleaseWorkflowID(r.AppID, r.ID)
	for i := range r.Installs {
		r.Installs[i].ReleaseID, r.Installs[i].Status, r.Installs[i].UpdatedAt = r.ID, status.ReleaseInstallPending, s.now()
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var app App
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("org_id = ? AND id = ?", r.OrgID, r.AppID).First(&app).Error; err != nil {
			return notFound(err, "app "+r.AppID)
		}
		var open Release
		err := tx.Where("app_id = ? AND finished_at IS NULL", r.AppID).First(&open).Error
		if err == nil {
			return fmt.Errorf("release %s of the app is %s: cancel it or let it end first: %w", open.ID, open.Status, ErrConflict)
		}
		if err != gorm.ErrRecordNotFound {
			return err
		}
		return tx.Create(&r).Error
	})
	if err != nil {
		return Release{}, fmt.Errorf("create release: %w", err)
	}
	return r, nil
}

// GetRelease finds one of the org's releases, with its installs.
func (s *Store) GetRelease(ctx context.Context, orgID, id string) (Release, error) {
	var r Release
	err := s.db.WithContext(ctx).Preload("Installs", func(db *gorm.DB) *gorm.DB { return db.Order("batch, install_name") }).
		Where("org_id = ? AND id = ?", orgID, id).First(&r).Error
	if err != nil {
		return r, notFound(err, "release "+id)
	}
	return r, nil
}

// GetReleaseByID is GetRelease for the workflow's activities (no org).
func (s *Store) GetReleaseByID(ctx context.Context, id string) (Release, error) {
	var r Release
	if err := s.db.WithContext(ctx).Select("org_id").Where("id = ?", id).First(&r).Error; err != nil {
		return Release{}, notFound(err, "release "+id)
	}
	return s.GetRelease(ctx, r.OrgID, id)
}

// ListReleases lists an app's releases, newest first, with their installs.
func (s *Store) ListReleases(ctx context.Context, orgID, appID string) ([]Release, error) {
	out := []Release{}
	err := s.db.WithContext(ctx).Preload("Installs", func(db *gorm.DB) *gorm.DB { return db.Order("batch, install_name") }).
		Where("org_id = ? AND app_id = ?", orgID, appID).Order("created_at DESC").Limit(50).Find(&out).Error
	return out, err
}

// SetReleaseStatus records a release's status and, for a halt, why; an
// ended status (succeeded, cancelled) finishes it.
func (s *Store) SetReleaseStatus(ctx context.Context, id string, st status.Release, why string) error {
	now := s.now()
	row, fields := Release{Status: st, Error: why, FinishedAt: &now}, []string{"Status", "Error"}
	if status.ReleaseEnded(st) {
		fields = append(fields, "FinishedAt")
	}
	return update(s.db.WithContext(ctx).Where("id = ?", id), &row, fields...).Error
}

// SetReleasePaused records whether the release was asked to pause.
func (s *Store) SetReleasePaused(ctx context.Context, id string, paused bool) error {
	return s.db.WithContext(ctx).Model(&Release{}).Where("id = ?", id).Update("paused", paused).Error
}

// UpdateReleaseInstall records one install's progress in a release.
func (s *Store) UpdateReleaseInstall(ctx context.Context, releaseID, installID string, change ReleaseInstallChange) error {
	var row ReleaseInstall
	fields := append(changed(change, &row), "Status", "WaitingUntil", "UpdatedAt")
	row.Status, row.UpdatedAt = change.Status, s.now()
	if change.Status == status.ReleaseInstallWaiting {
		row.WaitingUntil = &change.WaitingUntil
	}
	return update(s.db.WithContext(ctx).Where("release_id = ? AND install_id = ?", releaseID, installID), &row, fields...).Error
}

// SetInstallLabels replaces an install's labels.
func (s *Store) SetInstallLabels(ctx context.Context, orgID, id string, labels map[string]string) (Install, error) {
	res := update(s.db.WithContext(ctx).Where("org_id = ? AND id = ?", orgID, id),
		&Install{Labels: labels, UpdatedAt: s.now()}, "Labels", "UpdatedAt")
	if res.Error != nil {
		return Install{}, res.Error
	}
	return s.GetInstall(ctx, orgID, id)
}

// SkipPendingReleaseInstalls marks the installs a release did not reach
// (pending or waiting) skipped.
func (s *Store) SkipPendingReleaseInstalls(ctx context.Context, releaseID string) error {
	return update(s.db.WithContext(ctx).
		Where("release_id = ? AND status IN ?", releaseID, []status.ReleaseInstall{status.ReleaseInstallPending, status.ReleaseInstallWaiting}),
		&ReleaseInstall{Status: status.ReleaseInstallSkipped, UpdatedAt: s.now()}, "Status", "UpdatedAt").Error
}
