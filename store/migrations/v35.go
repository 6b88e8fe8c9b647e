package migrations

import (
	"time"
)

// v35 records imported offline deploys (docs/bundles.md, "Offline deploy"):
// an operation says where it ran (source "offline") and which signed bundle
// it deployed; each imported result is kept by what names it (the bundle
// index and when it started), so importing it again finds the operation it
// made.
var v35 = steps(
	add("install_operations", &v35Operation{}, "Source", "BundleIndex"),
	create(&v35OfflineResult{}),
)

type v35Operation struct {
	Source      string `gorm:"size:20;not null;default:''"`
	BundleIndex string `gorm:"size:100;not null;default:''"`
}

func (v35Operation) TableName() string { return "install_operations" }

type v35OfflineResult struct {
	InstallID   string    `gorm:"primaryKey;size:32"`
	BundleIndex string    `gorm:"primaryKey;size:100"`
	StartedAt   time.Time `gorm:"primaryKey"`
	OperationID string    `gorm:"size:32;not null"`
	CreatedAt   time.Time `gorm:"not null"`
}

func (v35OfflineResult) TableName() string { return "offline_results" }
