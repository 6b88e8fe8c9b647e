package migrations

import (
	"time"
)

// v4 adds builds, install components and settings, and the build and sync
// job of install steps.
var v4 = steps(
	add("install_steps", &v4InstallStep{}, "BuildID", "SyncJobID"),
	create(&v4Build{}, &v4InstallComponent{}, &v4Setting{}),
)

// v4InstallStep is the columns v4 adds to install_steps.
type v4InstallStep struct {
	BuildID   *string `gorm:"size:32"`
	SyncJobID *string `gorm:"size:32"`
}

type v4Build struct {
	ID            string `gorm:"primaryKey;size:32"`
	OrgID         string `gorm:"size:32;not null;index"`
	AppID         string `gorm:"size:32;not null;index:idx_builds_app_component"`
	Component     string `gorm:"size:200;not null;index:idx_builds_app_component"`
	ComponentType string `gorm:"size:40;not null"`
	ConfigVersion int
	SourceDigest  string  `gorm:"size:80;not null"`
	Status        string  `gorm:"size:20;not null"`
	WorkflowID    string  `gorm:"size:300;not null"`
	JobID         *string `gorm:"size:32"`
	Repository    string  `gorm:"size:300;not null"`
	Tag           string  `gorm:"size:128;not null"`
	Digest        string  `gorm:"size:80"`
	MediaType     string  `gorm:"size:200"`
	ArtifactType  string  `gorm:"size:200"`
	Size          int64
	Error         string `gorm:"type:text"`
	CreatedAt     time.Time
	FinishedAt    *time.Time
}

type v4InstallComponent struct {
	InstallID string `gorm:"primaryKey;size:32"`
	Component string `gorm:"primaryKey;size:200"`
	BuildID   string `gorm:"size:32;not null"`
	Digest    string `gorm:"size:80;not null"`
	Reference string `gorm:"size:600;not null"`
	UpdatedAt time.Time
}

type v4Setting struct {
	Name  string `gorm:"primaryKey;size:100"`
	Value string `gorm:"type:text;not null"`
}

func (v4Build) TableName() string            { return "builds" }
func (v4InstallComponent) TableName() string { return "install_components" }
func (v4Setting) TableName() string          { return "settings" }
