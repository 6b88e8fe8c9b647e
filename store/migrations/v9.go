package migrations

import (
	"time"
)

// v9 adds releases across installs: install labels, releases and the
// installs each one deploys.
var v9 = steps(
	add("installs", &v9Install{}, "Labels"),
	create(&v9Release{}, &v9ReleaseInstall{}),
)

// v9Install is the column v9 adds to installs.
type v9Install struct {
	Labels map[string]string `gorm:"serializer:json;type:text"`
}

type v9Release struct {
	ID               string `gorm:"primaryKey;size:32"`
	OrgID            string `gorm:"size:32;not null;index"`
	AppID            string `gorm:"size:32;not null;index"`
	ConfigVersion    int    `gorm:"not null;default:0"`
	RollbackOf       string `gorm:"size:32"`
	Selector         string `gorm:"type:text"`
	BatchSize        int    `gorm:"not null"`
	PauseMS          int64  `gorm:"not null;default:0"`
	FailureThreshold int    `gorm:"not null"`
	WorkflowID       string `gorm:"size:200;not null"`
	Status           string `gorm:"size:20;not null"`
	Paused           bool   `gorm:"not null;default:false"`
	Error            string `gorm:"type:text"`
	CreatedAt        time.Time
	FinishedAt       *time.Time
}

func (v9Release) TableName() string { return "releases" }

type v9ReleaseInstall struct {
	ReleaseID    string `gorm:"primaryKey;size:32"`
	InstallID    string `gorm:"primaryKey;size:32"`
	InstallName  string `gorm:"size:200;not null"`
	Batch        int    `gorm:"not null"`
	FromVersion  int    `gorm:"not null;default:0"`
	ToVersion    int    `gorm:"not null"`
	OperationID  string `gorm:"size:32"`
	Status       string `gorm:"size:20;not null"`
	Error        string `gorm:"type:text"`
	WaitingUntil *time.Time
	UpdatedAt    time.Time
}

func (v9ReleaseInstall) TableName() string { return "release_installs" }
