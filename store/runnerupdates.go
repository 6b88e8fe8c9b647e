package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
)

// RunnerVersion is a runner binary published into the vendor's registry
// (platform-wide: every org's runners run Outpost's runner).
type RunnerVersion struct {
	Version    string `gorm:"primaryKey;size:100" json:"version"`
	Repository string `gorm:"size:300;not null" json:"repository"`
	// Digest is the artifact's manifest digest; BinaryDigest its one
	// layer's, the executable's.
	Digest       string    `gorm:"size:100;not null" json:"digest"`
	BinaryDigest string    `gorm:"size:100;not null" json:"binary_digest"`
	Size         int64     `json:"size"`
	CreatedAt    time.Time `json:"created_at"`
}

// RunnerPolicy is the runner version an org wants (InstallID "") or an
// install's own: a version that overrides the org's, or Pinned (the
// install's runner is not updated).
type RunnerPolicy struct {
	OrgID     string    `gorm:"primaryKey;size:32" json:"org_id"`
	InstallID string    `gorm:"primaryKey;size:32" json:"install_id,omitempty"`
	Version   string    `gorm:"size:100;not null;default:''" json:"version"`
	Pinned    bool      `gorm:"not null;default:false" json:"pinned"`
	UpdatedAt time.Time `json:"updated_at"`
}

// RunnerUpdate is one attempt to move an install's runner to a version.
type RunnerUpdate struct {
	ID           string              `gorm:"primaryKey;size:32" json:"id"`
	OrgID        string              `gorm:"size:32;not null;index" json:"org_id"`
	InstallID    string              `gorm:"size:32;not null;index" json:"install_id"`
	RunnerID     string              `gorm:"size:32;not null;index" json:"runner_id"`
	FromVersion  string              `gorm:"size:100" json:"from_version"`
	Version      string              `gorm:"size:100;not null" json:"version"`
	Digest       string              `gorm:"size:100;not null" json:"digest"`
	WorkflowID   string              `gorm:"size:300;not null" json:"workflow_id"`
	Status       status.RunnerUpdate `gorm:"size:20;not null" json:"status"`
	Reason       string              `gorm:"type:text" json:"reason,omitempty"`
	RunnerReason string              `gorm:"type:text" json:"-"` // what the runner reported (Reason once the workflow ends)
	CreatedAt    time.Time           `json:"created_at"`
	FinishedAt   *time.Time          `json:"finished_at,omitempty"`
}

// PublishRunnerVersion records a published runner binary. Publishing the
// same version again with another digest is ErrConflict: a version names
// one binary.
func (s *Store) PublishRunnerVersion(ctx context.Context, v RunnerVersion) (RunnerVersion, error) {
	old, err := s.GetRunnerVersion(ctx, v.Version)
	switch {
	case err == nil && old.Digest == v.Digest:
		return old, nil
	case err == nil:
		return old, fmt.Errorf("runner version %s was published with digest %s: %w", v.Version, old.Digest, ErrConflict)
	case !errors.Is(err, ErrNotFound):
		return old, err
	}
	v.CreatedAt = s.now()
	if err := s.db.WithContext(ctx).Create(&v).Error; err != nil {
		return v, fmt.Errorf("publish runner version %s: %w", v.Version, err)
	}
	return v, nil
}

// GetRunnerVersion reads a published runner version.
func (s *Store) GetRunnerVersion(ctx context.Context, version string) (RunnerVersion, error) {
	return first[RunnerVersion](s.db.WithContext(ctx), "runner version "+version, "version = ?", version)
}

// ListRunnerVersions lists the published runner versions, newest first.
func (s *Store) ListRunnerVersions(ctx context.Context) ([]RunnerVersion, error) {
	return list[RunnerVersion](s.db.WithContext(ctx), "created_at DESC, version DESC", "1 = 1")
}

// SetRunnerPolicy stores an org's (InstallID "") or an install's policy.
func (s *Store) SetRunnerPolicy(ctx context.Context, p RunnerPolicy) (RunnerPolicy, error) {
	p.UpdatedAt = s.now()
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "org_id"}, {Name: "install_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"version", "pinned", "updated_at"}),
	}).Create(&p).Error
	if err != nil {
		return p, fmt.Errorf("set runner policy: %w", err)
	}
	return p, nil
}

// RunnerPolicies returns the org's policy and the install's (zero values
// when none was set).
func (s *Store) RunnerPolicies(ctx context.Context, orgID, installID string) (org, inst RunnerPolicy, err error) {
	rows, err := list[RunnerPolicy](s.db.WithContext(ctx), "install_id", "org_id = ? AND install_id IN ?", orgID, []string{"", installID})
	org, inst = RunnerPolicy{OrgID: orgID}, RunnerPolicy{OrgID: orgID, InstallID: installID}
	for _, p := range rows {
		if p.InstallID == "" {
			org = p
		} else {
			inst = p
		}
	}
	return org, inst, err
}

// CreateRunnerUpdate records an update before its workflow starts.
func (s *Store) CreateRunnerUpdate(ctx context.Context, u RunnerUpdate) (RunnerUpdate, error) {
	u.Status, u.CreatedAt = status.RunnerUpdateRunning, s.now()
	if err := s.db.WithContext(ctx).Create(&u).Error; err != nil {
		return u, fmt.Errorf("create runner update: %w", err)
	}
	return u, nil
}

// GetRunnerUpdate reads one of an org's runner updates.
func (s *Store) GetRunnerUpdate(ctx context.Context, orgID, id string) (RunnerUpdate, error) {
	return first[RunnerUpdate](s.db.WithContext(ctx), "runner update "+id, "org_id = ? AND id = ?", orgID, id)
}

// GetRunnerUpdateByID reads an update for the workflow that runs it.
func (s *Store) GetRunnerUpdateByID(ctx context.Context, id string) (RunnerUpdate, error) {
	return first[RunnerUpdate](s.db.WithContext(ctx), "runner update "+id, "id = ?", id)
}

// ListRunnerUpdates lists a runner's updates, newest first.
func (s *Store) ListRunnerUpdates(ctx context.Context, orgID, runnerID string, limit int) ([]RunnerUpdate, error) {
	return list[RunnerUpdate](s.db.WithContext(ctx).Limit(limit), "created_at DESC, id DESC", "org_id = ? AND runner_id = ?", orgID, runnerID)
}

// AvailableRunnerUpdates are, by runner, the org's runners' latest updates
// when they wait for the customer (status available): the runner holds the
// verified release until its customer accepts it.
func (s *Store) AvailableRunnerUpdates(ctx context.Context, orgID string) (map[string]RunnerUpdate, error) {
	var latest []RunnerUpdate
	err := s.db.WithContext(ctx).Where("org_id = ? AND status = ?", orgID, status.RunnerUpdateAvailable).
		Where(`NOT EXISTS (SELECT 1 FROM runner_updates n WHERE n.runner_id = runner_updates.runner_id
			AND (n.created_at > runner_updates.created_at OR (n.created_at = runner_updates.created_at AND n.id > runner_updates.id)))`).
		Find(&latest).Error // SQL both dialects speak (no DISTINCT ON)
	if err != nil {
		return nil, fmt.Errorf("available runner updates: %w", err)
	}
	out := map[string]RunnerUpdate{}
	for _, u := range latest {
		out[u.RunnerID] = u
	}
	return out, nil
}

// FinishRunnerUpdate records how an update ended.
func (s *Store) FinishRunnerUpdate(ctx context.Context, id string, st status.RunnerUpdate, reason string) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return s.endRunnerUpdate(tx.Where("id = ?", id), st, reason)
	})
	if err != nil {
		return fmt.Errorf("finish runner update %s: %w", id, err)
	}
	return nil
}

// SucceedRunnerUpdate records the update succeeded unless its runner
// reported a rollback (the new binary passed its health check, then could
// not be put in place or executed); then it is failed with that reason. It
// returns the status recorded.
func (s *Store) SucceedRunnerUpdate(ctx context.Context, id string) (status.RunnerUpdate, error) {
	now := s.now()
	st := status.RunnerUpdateSucceeded
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := update(tx.Where("id = ? AND runner_reason = ''", id), &RunnerUpdate{Status: st, FinishedAt: &now},
			"Status", "Reason", "FinishedAt")
		if res.Error != nil || res.RowsAffected == 1 {
			return res.Error
		}
		var u RunnerUpdate
		if err := tx.Where("id = ?", id).First(&u).Error; err != nil {
			return notFound(err, "runner update "+id)
		}
		st = status.RunnerUpdateFailed
		return s.endRunnerUpdate(tx.Where("id = ?", id), st, u.RunnerReason+afterHealthCheck)
	})
	if err != nil {
		return "", fmt.Errorf("finish runner update %s: %w", id, err)
	}
	return st, nil
}

// endRunnerUpdate records the end of the updates q matches.
func (s *Store) endRunnerUpdate(q *gorm.DB, st status.RunnerUpdate, reason string) error {
	now := s.now()
	return update(q, &RunnerUpdate{Status: st, Reason: reason, FinishedAt: &now}, "Status", "Reason", "FinishedAt").Error
}

// afterHealthCheck ends the reason of an update whose new binary passed
// its health check before the runner rolled back.
const afterHealthCheck = " (after the new version had passed its health check)"

// RecordRunnerUpdateReport keeps what a runner said of its hand-over, on
// the update of that runner it names (a report naming another runner's
// update changes nothing). An update the customer accepted after it was
// available is succeeded. A rollback reported after the update was
// recorded succeeded — the new binary passed its health check, then could
// not be put in place or executed — makes it failed: the old one runs.
func (s *Store) RecordRunnerUpdateReport(ctx context.Context, runnerID string, rep protocol.RunnerUpdateReport) error {
	said := rep.Status + ": " + rep.Reason
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if rep.Status == protocol.UpdateAccepted { // the customer accepted the update that was available
			now := s.now()
			return update(tx.Where("id = ? AND runner_id = ? AND status = ?", rep.UpdateID, runnerID, status.RunnerUpdateAvailable),
				&RunnerUpdate{Status: status.RunnerUpdateSucceeded, Reason: rep.Reason, FinishedAt: &now}, "Status", "Reason", "FinishedAt").Error
		}
		mine := tx.Model(&RunnerUpdate{}).Where("id = ? AND runner_id = ?", rep.UpdateID, runnerID)
		if err := mine.Update("runner_reason", said).Error; err != nil {
			return err
		}
		if rep.Status != protocol.UpdateRolledBack {
			return nil
		}
		if err := update(tx.Where("id = ? AND runner_id = ? AND status = ?", rep.UpdateID, runnerID, status.RunnerUpdateAvailable),
			&RunnerUpdate{Status: status.RunnerUpdateFailed, Reason: said}, "Status", "Reason").Error; err != nil {
			return err // accepted by the customer, then rolled back
		}
		return update(tx.Where("id = ? AND runner_id = ? AND status = ?", rep.UpdateID, runnerID, status.RunnerUpdateSucceeded),
			&RunnerUpdate{Status: status.RunnerUpdateFailed, Reason: said + afterHealthCheck}, "Status", "Reason").Error
	})
	if err != nil {
		return fmt.Errorf("record runner update report: %w", err)
	}
	return nil
}

// EnqueueAcceptedUpdateHealthJob queues the noop job the new version must
// run to be healthy when the runner's customer accepted update id, which
// was available (the update's workflow had ended); nothing otherwise.
func (s *Store) EnqueueAcceptedUpdateHealthJob(ctx context.Context, runnerID, id string) error {
	var u RunnerUpdate
	err := s.db.WithContext(ctx).Where("id = ? AND runner_id = ? AND status = ?", id, runnerID, status.RunnerUpdateAvailable).Take(&u).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("accepted runner update %s: %w", id, err)
	}
	m, err := json.Marshal(protocol.NoopManifest{Lines: []string{"health check of runner " + u.Version + " (update " + u.ID + ", accepted by the customer)"}})
	if err != nil {
		return err
	}
	_, _, err = s.EnqueueJob(ctx, JobSpec{Key: "runner-update/" + u.ID + "/accepted-health", OrgID: u.OrgID, RunnerID: runnerID,
		InstallID: &u.InstallID, Type: protocol.JobTypeNoop, Manifest: m, TimeoutMS: time.Minute.Milliseconds()})
	return err
}

// RunnerHealthCheckPending says whether the runner, reporting version, is
// a new version on trial: an update of it to that version is running and
// no noop job has succeeded on that version since the update began (the
// health job the update waits for).
func (s *Store) RunnerHealthCheckPending(ctx context.Context, runnerID, version string) (bool, error) {
	var pending bool
	err := s.db.WithContext(ctx).Raw(`SELECT EXISTS (SELECT 1 FROM runner_updates u
		WHERE u.runner_id = ? AND u.version = ? AND u.status = ?
		AND NOT EXISTS (SELECT 1 FROM jobs j JOIN job_attempts a ON a.job_id = j.id AND a.attempt = j.attempt
			WHERE j.runner_id = u.runner_id AND j.type = ? AND j.status = ? AND a.runner_version = u.version
			AND j.created_at >= u.created_at))`,
		runnerID, version, status.RunnerUpdateRunning, protocol.JobTypeNoop, status.JobSucceeded).Scan(&pending).Error
	if err != nil {
		return false, fmt.Errorf("runner health check: %w", err)
	}
	return pending, nil
}

// AttemptRunnerVersion is the runner version that claimed a job attempt
// ("" when the runner did not say).
func (s *Store) AttemptRunnerVersion(ctx context.Context, jobID string, attempt int) (string, error) {
	a, err := first[JobAttempt](s.db.WithContext(ctx), "attempt of job "+jobID, "job_id = ? AND attempt = ?", jobID, attempt)
	return a.RunnerVersion, err
}
