package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/status"
)

// Support bundles: the API records one (CreateSupportBundle), its workflow queues the support job and
// records it (UpdateSupportBundle), the runner uploads the archive through the gateway
// (PutSupportBundleArchive, while the job's attempt runs), the API lists and serves it until it
// expires; SweepSupportBundles deletes expired ones. An expired bundle is gone for the API at once,
// whenever the sweep runs.

// Defaults of support bundles.
const (
	DefaultSupportBundleRetention = 7 * 24 * time.Hour
	DefaultSupportBundleMaxBytes  = protocol.DefaultSupportBundleMaxBytes
)

// CreateSupportBundle records a bundle before its workflow starts; ExpiresAt defaults to now plus
// DefaultSupportBundleRetention.
func (s *Store) CreateSupportBundle(ctx context.Context, b SupportBundle) (SupportBundle, error) {
	if b.ID == "" {
		b.ID = NewID("sb")
	}
	b.Status, b.CreatedAt = status.JobQueued, s.now()
	if b.ExpiresAt.IsZero() {
		b.ExpiresAt = b.CreatedAt.Add(DefaultSupportBundleRetention)
	}
	if b.Parts == nil {
		b.Parts = []string{}
	}
	if err := s.db.WithContext(ctx).Create(&b).Error; err != nil {
		return SupportBundle{}, fmt.Errorf("create support bundle: %w", err)
	}
	return b, nil
}

// GetSupportBundle reads one of the org's bundles that has not expired.
func (s *Store) GetSupportBundle(ctx context.Context, orgID, id string) (SupportBundle, error) {
	return first[SupportBundle](s.db.WithContext(ctx), "support bundle "+id, "org_id = ? AND id = ? AND expires_at > ?", orgID, id, s.now())
}

// GetSupportBundleByID reads a bundle for the workflow that collects it.
func (s *Store) GetSupportBundleByID(ctx context.Context, id string) (SupportBundle, error) {
	return first[SupportBundle](s.db.WithContext(ctx), "support bundle "+id, "id = ?", id)
}

// ListSupportBundles lists an install's bundles that have not expired, newest first.
func (s *Store) ListSupportBundles(ctx context.Context, orgID, installID string, limit int) ([]SupportBundle, error) {
	return newestOfInstall[SupportBundle](s.db.WithContext(ctx).Where("expires_at > ?", s.now()), orgID, installID, limit)
}

// UpdateSupportBundle records the bundle's job and outcome.
func (s *Store) UpdateSupportBundle(ctx context.Context, b SupportBundle) error {
	if b.Parts == nil {
		b.Parts = []string{}
	}
	err := s.db.WithContext(ctx).Model(&SupportBundle{}).Where("id = ?", b.ID).
		Select("job_id", "status", "error", "parts", "unavailable", "finished_at").Updates(&b).Error
	if err != nil {
		return fmt.Errorf("update support bundle %s: %w", b.ID, err)
	}
	return nil
}

// PutSupportBundleArchive stores the archive a support job's running attempt uploads (again: the
// last upload wins). One over maxBytes is refused with ErrTooLarge, naming both sizes.
func (s *Store) PutSupportBundleArchive(ctx context.Context, runnerID, jobID string, attempt int, data []byte, maxBytes int64) error {
	if int64(len(data)) > maxBytes {
		return fieldErr("bundle", "is %d bytes, over the cap of %d bytes: %v", len(data), maxBytes, ErrTooLarge)
	}
	if len(data) == 0 {
		return fieldErr("bundle", "is empty")
	}
	sum := sha256.Sum256(data)
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if _, err := currentAttempt(tx, runnerID, jobID, attempt); err != nil {
			return err
		}
		b, err := first[SupportBundle](tx, "support bundle of job "+jobID, "job_id = ?", jobID)
		if err != nil {
			return err
		}
		row := SupportBundleArchive{BundleID: b.ID, Data: data, CreatedAt: s.now()}
		if err := tx.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "bundle_id"}},
			DoUpdates: clause.AssignmentColumns([]string{"data", "created_at"})}).Create(&row).Error; err != nil {
			return fmt.Errorf("store support bundle %s: %w", b.ID, err)
		}
		return tx.Model(&SupportBundle{}).Where("id = ?", b.ID).
			Updates(map[string]any{"size_bytes": len(data), "sha256": hex.EncodeToString(sum[:])}).Error
	})
}

// SupportBundleData reads the archive of one of the org's bundles that has not expired.
func (s *Store) SupportBundleData(ctx context.Context, orgID, id string) (SupportBundle, []byte, error) {
	b, err := s.GetSupportBundle(ctx, orgID, id)
	if err != nil {
		return SupportBundle{}, nil, err
	}
	a, err := first[SupportBundleArchive](s.db.WithContext(ctx), "the archive of support bundle "+id, "bundle_id = ?", id)
	return b, a.Data, err
}

// SweepSupportBundles deletes the bundles (and archives) that expired; it returns how many.
func (s *Store) SweepSupportBundles(ctx context.Context) (int64, error) {
	var n int64
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		expired := tx.Model(&SupportBundle{}).Select("id").Where("expires_at <= ?", s.now())
		if err := tx.Where("bundle_id IN (?)", expired).Delete(&SupportBundleArchive{}).Error; err != nil {
			return err
		}
		res := tx.Where("expires_at <= ?", s.now()).Delete(&SupportBundle{})
		n = res.RowsAffected
		return res.Error
	})
	if err != nil {
		return 0, fmt.Errorf("sweep support bundles: %w", err)
	}
	return n, nil
}

// GetJobByKey reads one of the org's jobs by its idempotency key (a logs request finds the job its
// workflow queued).
func (s *Store) GetJobByKey(ctx context.Context, orgID, key string) (Job, error) {
	return first[Job](s.db.WithContext(ctx).Omit("manifest", "outputs", "inputs"), "job "+key, "org_id = ? AND idempotency_key = ?", orgID, key)
}
