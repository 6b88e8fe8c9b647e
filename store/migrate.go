package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/outpost-dev/outpost/store/migrations"
)

// SchemaMigration records an applied migration.
type SchemaMigration struct {
	Version   int `gorm:"primaryKey;autoIncrement:false"`
	Name      string
	AppliedAt time.Time
}

// Migrate applies every migration not yet applied (package migrations), each
// in its own transaction. On PostgreSQL an advisory lock keeps concurrent
// starts (api and worker processes) from racing.
// It then checks the key-encryption keys (CheckKeys) and seals the values
// written before secrets were sealed (SealPlaintext), the registry's legacy
// signing key among them.
func (s *Store) Migrate(ctx context.Context) error {
	if err := s.migrateTo(ctx, LatestSchemaVersion()); err != nil {
		return err
	}
	if err := s.CheckKeys(ctx); err != nil {
		return err
	}
	if _, err := s.SealPlaintext(ctx); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if err := s.sealLegacyKey(ctx); err != nil {
		return fmt.Errorf("store: seal the registry's legacy signing key: %w", err)
	}
	return nil
}

// migrateTo applies the migrations not yet applied up to version.
func (s *Store) migrateTo(ctx context.Context, version int) error {
	db := s.db.WithContext(ctx)
	if s.dialect == Postgres {
		// Session-level lock on one connection for the whole run.
		conn, err := s.sqlConn(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(727001)"); err != nil {
			return fmt.Errorf("store: migration lock: %w", err)
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(727001)")
	}
	if err := db.AutoMigrate(&SchemaMigration{}); err != nil {
		return fmt.Errorf("store: create schema_migrations: %w", err)
	}
	var applied []SchemaMigration
	if err := db.Find(&applied).Error; err != nil {
		return fmt.Errorf("store: read schema_migrations: %w", err)
	}
	done := map[int]bool{}
	for _, m := range applied {
		done[m.Version] = true
	}
	for _, m := range migrations.All[:version] {
		if done[m.Version] {
			continue
		}
		err := db.Transaction(func(tx *gorm.DB) error {
			if err := m.Up(tx); err != nil {
				return err
			}
			return tx.Create(&SchemaMigration{Version: m.Version, Name: m.Name, AppliedAt: s.now()}).Error
		})
		if err != nil {
			return fmt.Errorf("store: migration %d (%s): %w", m.Version, m.Name, err)
		}
	}
	return nil
}

// SchemaVersion is the highest applied migration.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.db.WithContext(ctx).Model(&SchemaMigration{}).Select("COALESCE(MAX(version), 0)").Scan(&v).Error
	return v, err
}

// LatestSchemaVersion is the version Migrate brings the database to.
func LatestSchemaVersion() int { return len(migrations.All) }
