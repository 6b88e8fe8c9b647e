package migrations

import (
	"time"
)

// v6 adds input updates: the inputs' version, its history, the digest of
// what each step rendered and of what each install's step was applied with.
var v6 = steps(
	add("installs", &v6Install{}, "InputsVersion"),
	add("install_steps", &v6InstallStep{}, "RenderDigest"),
	create(&v6InputVersion{}, &v6AppliedRender{}),
)

// v6Install is the column v6 adds to installs.
type v6Install struct {
	InputsVersion int `gorm:"not null;default:0"`
}

// v6InstallStep is the column v6 adds to install_steps.
type v6InstallStep struct {
	RenderDigest string `gorm:"size:80"`
}

type v6InputVersion struct {
	InstallID string   `gorm:"primaryKey;size:32"`
	Version   int      `gorm:"primaryKey;autoIncrement:false"`
	Set       []string `gorm:"serializer:json;type:text"`
	Removed   []string `gorm:"serializer:json;type:text"`
	CreatedAt time.Time
}

type v6AppliedRender struct {
	InstallID   string `gorm:"primaryKey;size:32"`
	Name        string `gorm:"primaryKey;size:200"`
	Digest      string `gorm:"size:80;not null"`
	OperationID string `gorm:"size:32;not null"`
	UpdatedAt   time.Time
}

func (v6InputVersion) TableName() string  { return "install_input_versions" }
func (v6AppliedRender) TableName() string { return "install_renders" }
