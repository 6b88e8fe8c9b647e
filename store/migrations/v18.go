package migrations

import (
	"time"
)

// v18 is the runner's self-update: published runner versions, the version
// an org (or an install) wants, each update attempt, and the runner
// version that claimed each job attempt.
var v18 = steps(
	create(&v18RunnerVersion{}, &v18RunnerPolicy{}, &v18RunnerUpdate{}),
	add("job_attempts", &v18JobAttempt{}, "RunnerVersion"),
)

type v18RunnerVersion struct {
	Version      string `gorm:"primaryKey;size:100"`
	Repository   string `gorm:"size:300;not null"`
	Digest       string `gorm:"size:100;not null"`
	BinaryDigest string `gorm:"size:100;not null"`
	Size         int64
	CreatedAt    time.Time
}

func (v18RunnerVersion) TableName() string { return "runner_versions" }

type v18RunnerPolicy struct {
	OrgID     string `gorm:"primaryKey;size:32"`
	InstallID string `gorm:"primaryKey;size:32"`
	Version   string `gorm:"size:100;not null;default:''"`
	Pinned    bool   `gorm:"not null;default:false"`
	UpdatedAt time.Time
}

func (v18RunnerPolicy) TableName() string { return "runner_policies" }

type v18RunnerUpdate struct {
	ID           string `gorm:"primaryKey;size:32"`
	OrgID        string `gorm:"size:32;not null;index"`
	InstallID    string `gorm:"size:32;not null;index"`
	RunnerID     string `gorm:"size:32;not null;index"`
	FromVersion  string `gorm:"size:100"`
	Version      string `gorm:"size:100;not null"`
	Digest       string `gorm:"size:100;not null"`
	WorkflowID   string `gorm:"size:300;not null"`
	Status       string `gorm:"size:20;not null"`
	Reason       string `gorm:"type:text"`
	RunnerReason string `gorm:"type:text"`
	CreatedAt    time.Time
	FinishedAt   *time.Time
}

func (v18RunnerUpdate) TableName() string { return "runner_updates" }

// v18JobAttempt is the column v18 adds to job_attempts.
type v18JobAttempt struct {
	RunnerVersion string `gorm:"size:100;not null;default:''"`
}
