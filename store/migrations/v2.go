package migrations

import (
	"time"
)

// v2 adds the terraform state backend: job state credentials, state
// versions and workspace locks.
var v2 = steps(
	create(&v2JobStateCredential{}, &v2TerraformStateVersion{}, &v2TerraformStateLock{}),
)

type v2JobStateCredential struct {
	JobID     string `gorm:"primaryKey;size:32"`
	OrgID     string `gorm:"size:32;not null"`
	Workspace string `gorm:"size:200;not null;index"`
	TokenHash string `gorm:"size:64;not null"`
	CreatedAt time.Time
}

type v2TerraformStateVersion struct {
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

type v2TerraformStateLock struct {
	OrgID     string `gorm:"primaryKey;size:32"`
	Workspace string `gorm:"primaryKey;size:200"`
	LockID    string `gorm:"size:200;not null"`
	Info      string `gorm:"type:text;not null"`
	JobID     string `gorm:"size:32;not null;index"`
	Attempt   int    `gorm:"not null"`
	CreatedAt time.Time
}

func (v2JobStateCredential) TableName() string    { return "job_state_credentials" }
func (v2TerraformStateVersion) TableName() string { return "terraform_state_versions" }
func (v2TerraformStateLock) TableName() string    { return "terraform_state_locks" }
