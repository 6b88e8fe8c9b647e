package migrations

import (
	"time"
)

// v17 adds support bundles: one row per bundle an install's runner collects, and its archive in a
// table of its own, so that listing bundles never reads an archive.
var v17 = steps(
	create(&v17SupportBundle{}, &v17SupportBundleArchive{}),
)

// v17SupportBundle is a support_bundles row; expires_at is swept.
type v17SupportBundle struct {
	ID          string    `gorm:"primaryKey;size:32"`
	OrgID       string    `gorm:"size:32;not null;index"`
	InstallID   string    `gorm:"size:32;not null;index"`
	WorkflowID  string    `gorm:"size:300;not null"`
	JobID       *string   `gorm:"size:32;index"`
	Status      string    `gorm:"size:20;not null"`
	Error       string    `gorm:"type:text"`
	Parts       string    `gorm:"type:text"`
	Unavailable string    `gorm:"type:text"`
	SizeBytes   int64     `gorm:"not null;default:0"`
	SHA256      string    `gorm:"column:sha256;size:64"`
	CreatedAt   time.Time `gorm:"not null"`
	FinishedAt  *time.Time
	ExpiresAt   time.Time `gorm:"not null;index"`
}

func (v17SupportBundle) TableName() string { return "support_bundles" }

// v17SupportBundleArchive is a bundle's tar.gz.
type v17SupportBundleArchive struct {
	BundleID  string    `gorm:"primaryKey;size:32"`
	Data      []byte    `gorm:"not null"`
	CreatedAt time.Time `gorm:"not null"`
}

func (v17SupportBundleArchive) TableName() string { return "support_bundle_archives" }
