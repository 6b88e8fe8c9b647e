package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// migration is one versioned schema change. Versions only ever grow; a
// migration, once released, is never edited — a change is a new migration.
type migration struct {
	Version int
	Name    string
	Up      func(tx *gorm.DB) error
}

// migrations, in order. Migration 1 creates the schema from the models as they
// were at that version; later migrations must describe their own changes
// (with snapshot structs or SQL), not call AutoMigrate on today's models.
var migrations = []migration{
	{1, "initial schema", func(tx *gorm.DB) error { return tx.Migrator().CreateTable(allModels()...) }},
	{2, "terraform state backend", func(tx *gorm.DB) error {
		return tx.Migrator().CreateTable(&m2JobStateCredential{}, &m2TerraformStateVersion{}, &m2TerraformStateLock{})
	}},
	{3, "install operations, steps, outputs", migration3},
	{4, "builds, install components, settings", migration4},
	{5, "jobs with deferred inputs", migration5},
}

// migration5 adds the jobs' deferred inputs. Migration 1 creates the jobs
// table from today's Job model, so on a new database the columns exist
// already.
func migration5(tx *gorm.DB) error {
	type jobs struct {
		InputsDeferred bool    `gorm:"not null;default:false"`
		Inputs         *string `gorm:"type:text"`
		InputsAt       *time.Time
		InputsWaitMS   int64 `gorm:"not null;default:0"`
	}
	m := tx.Table("jobs").Migrator()
	for _, col := range []string{"InputsDeferred", "Inputs", "InputsAt", "InputsWaitMS"} {
		if m.HasColumn(&jobs{}, col) {
			continue
		}
		if err := m.AddColumn(&jobs{}, col); err != nil {
			return err
		}
	}
	return nil
}

// SchemaMigration records an applied migration.
type SchemaMigration struct {
	Version   int `gorm:"primaryKey;autoIncrement:false"`
	Name      string
	AppliedAt time.Time
}

// Migrate applies every migration not yet applied, each in its own
// transaction. On PostgreSQL an advisory lock keeps concurrent starts (api and
// worker processes) from racing.
func (s *Store) Migrate(ctx context.Context) error {
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
	for _, m := range migrations {
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
func LatestSchemaVersion() int { return migrations[len(migrations)-1].Version }

// Migration 2's tables, as they were at version 2 (the live models are in
// terraform.go).

type m2JobStateCredential struct {
	JobID     string `gorm:"primaryKey;size:32"`
	OrgID     string `gorm:"size:32;not null"`
	Workspace string `gorm:"size:200;not null;index"`
	TokenHash string `gorm:"size:64;not null"`
	CreatedAt time.Time
}

func (m2JobStateCredential) TableName() string { return "job_state_credentials" }

type m2TerraformStateVersion struct {
	ID          int64  `gorm:"primaryKey;autoIncrement"`
	OrgID       string `gorm:"size:32;not null;uniqueIndex:idx_tf_state_versions_workspace_version,priority:1"`
	Workspace   string `gorm:"size:200;not null;uniqueIndex:idx_tf_state_versions_workspace_version,priority:2"`
	Version     int    `gorm:"not null;uniqueIndex:idx_tf_state_versions_workspace_version,priority:3"`
	Serial      int64  `gorm:"not null;default:0"`
	Lineage     string `gorm:"size:100"`
	MD5         string `gorm:"column:md5;size:32;not null"`
	State       string `gorm:"type:text;not null"`
	JobID       string `gorm:"size:32;not null"`
	Attempt     int    `gorm:"not null"`
	DiscardedAt *time.Time
	CreatedAt   time.Time
}

func (m2TerraformStateVersion) TableName() string { return "terraform_state_versions" }

type m2TerraformStateLock struct {
	OrgID     string `gorm:"primaryKey;size:32"`
	Workspace string `gorm:"primaryKey;size:200"`
	LockID    string `gorm:"size:200;not null"`
	Info      string `gorm:"type:text;not null"`
	JobID     string `gorm:"size:32;not null;index"`
	Attempt   int    `gorm:"not null"`
	CreatedAt time.Time
}

func (m2TerraformStateLock) TableName() string { return "terraform_state_locks" }
