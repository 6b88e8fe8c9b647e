package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
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
	// MaxSupportBundlesPerInstall is how many unexpired bundles an install
	// keeps: one more is refused until one is deleted or expires.
	MaxSupportBundlesPerInstall = 10
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
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := s.holdInstallRow(tx, b.InstallID); err != nil {
			return err
		}
		var held []SupportBundle
		if err := tx.Select("id", "expires_at").Where("install_id = ? AND expires_at > ?", b.InstallID, b.CreatedAt).
			Order("expires_at").Find(&held).Error; err != nil {
			return err
		}
		if len(held) >= MaxSupportBundlesPerInstall {
			return fmt.Errorf("install %s holds %d support bundles, the most it keeps: delete one (DELETE /v1/installs/%s/support-bundles/<id>) "+
				"or wait until the oldest expires at %s: %w", b.InstallID, len(held), b.InstallID, held[0].ExpiresAt.UTC().Format(time.RFC3339), ErrConflict)
		}
		return tx.Create(&b).Error
	})
	if err != nil {
		return SupportBundle{}, fmt.Errorf("create support bundle: %w", err)
	}
	return b, nil
}

// holdInstallRow locks the install's row until tx ends, so that checks of
// what it holds and the insert after them are not interleaved (SQLite
// serialises writers anyway).
func (s *Store) holdInstallRow(tx *gorm.DB, installID string) error {
	if s.dialect != Postgres {
		return nil
	}
	var ids []string
	return tx.Raw("SELECT id FROM installs WHERE id = ? FOR UPDATE", installID).Scan(&ids).Error
}

// DeleteSupportBundle deletes one of the install's bundles and its archive; one still being
// collected is ErrConflict.
func (s *Store) DeleteSupportBundle(ctx context.Context, orgID, installID, id string) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		b, err := first[SupportBundle](tx, "support bundle "+id, "org_id = ? AND install_id = ? AND id = ? AND expires_at > ?",
			orgID, installID, id, s.now())
		if err != nil {
			return err
		}
		if !status.JobTerminal(b.Status) {
			return fmt.Errorf("support bundle %s is still being collected (%s): %w", id, b.Status, ErrConflict)
		}
		if err := tx.Where("bundle_id = ?", id).Delete(&SupportBundleArchive{}).Error; err != nil {
			return err
		}
		return tx.Where("id = ?", id).Delete(&SupportBundle{}).Error
	})
	if err != nil {
		return fmt.Errorf("delete support bundle: %w", err)
	}
	return nil
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
		return update(tx.Where("id = ?", b.ID), &SupportBundle{SizeBytes: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}, "SizeBytes", "SHA256").Error
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
