package migrations

import (
	"time"
)

// v1 creates the initial schema: the tables as they were at version 1.
var v1 = steps(
	create(&v1Org{}, &v1APIToken{}, &v1App{}, &v1AppConfig{}, &v1Component{},
		&v1Install{}, &v1InstallInput{}, &v1Runner{}, &v1RunnerToken{}, &v1Job{}, &v1JobAttempt{}, &v1JobEvent{},
		&v1JobLogChunk{}, &v1InstallCommand{}),
)

type v1Org struct {
	ID        string `gorm:"primaryKey;size:32"`
	Name      string `gorm:"size:200;not null;uniqueIndex"`
	CreatedAt time.Time
}

type v1APIToken struct {
	ID        string `gorm:"primaryKey;size:32"`
	OrgID     string `gorm:"size:32;not null;index"`
	Name      string `gorm:"size:200;not null"`
	TokenHash string `gorm:"size:64;not null;uniqueIndex"`
	CreatedAt time.Time
	RevokedAt *time.Time
}

type v1App struct {
	ID          string `gorm:"primaryKey;size:32"`
	OrgID       string `gorm:"size:32;not null;uniqueIndex:idx_apps_org_name"`
	Name        string `gorm:"size:200;not null;uniqueIndex:idx_apps_org_name"`
	Description string `gorm:"type:text"`
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

type v1AppConfig struct {
	ID        string `gorm:"primaryKey;size:32"`
	OrgID     string `gorm:"size:32;not null;index"`
	AppID     string `gorm:"size:32;not null;uniqueIndex:idx_app_configs_app_version"`
	Version   int    `gorm:"not null;uniqueIndex:idx_app_configs_app_version"`
	Content   string `gorm:"type:text;not null"`
	CreatedAt time.Time
}

type v1Component struct {
	ID           string         `gorm:"primaryKey;size:32"`
	OrgID        string         `gorm:"size:32;not null;index"`
	AppID        string         `gorm:"size:32;not null;uniqueIndex:idx_components_app_name"`
	Name         string         `gorm:"size:200;not null;uniqueIndex:idx_components_app_name"`
	Type         string         `gorm:"size:40;not null"`
	Dependencies []string       `gorm:"serializer:json;type:text"`
	Config       map[string]any `gorm:"serializer:json;type:text"`
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

type v1Install struct {
	ID        string           `gorm:"primaryKey;size:32"`
	OrgID     string           `gorm:"size:32;not null;uniqueIndex:idx_installs_org_name"`
	AppID     string           `gorm:"size:32;not null;index"`
	Name      string           `gorm:"size:200;not null;uniqueIndex:idx_installs_org_name"`
	Status    string           `gorm:"size:40;not null"`
	Inputs    []v1InstallInput `gorm:"foreignKey:InstallID;constraint:OnDelete:CASCADE"`
	CreatedAt time.Time
	UpdatedAt time.Time
}

type v1InstallInput struct {
	InstallID string `gorm:"primaryKey;size:32"`
	Name      string `gorm:"primaryKey;size:200"`
	Value     string `gorm:"type:text"`
	Sensitive bool
}

type v1Runner struct {
	ID                    string  `gorm:"primaryKey;size:32"`
	OrgID                 string  `gorm:"size:32;not null;index"`
	InstallID             *string `gorm:"size:32;uniqueIndex"`
	Kind                  string  `gorm:"size:20;not null"`
	Name                  string  `gorm:"size:200"`
	RegistrationTokenHash *string `gorm:"size:64;uniqueIndex"`
	RegisteredAt          *time.Time
	Version               string   `gorm:"size:100"`
	Capabilities          []string `gorm:"serializer:json;type:text"`
	LastSeenAt            *time.Time
	CreatedAt             time.Time
}

type v1RunnerToken struct {
	ID        string `gorm:"primaryKey;size:32"`
	RunnerID  string `gorm:"size:32;not null;index"`
	TokenHash string `gorm:"size:64;not null;uniqueIndex"`
	CreatedAt time.Time
	RevokedAt *time.Time
}

type v1Job struct {
	ID                string  `gorm:"primaryKey;size:32"`
	OrgID             string  `gorm:"size:32;not null;index"`
	RunnerID          string  `gorm:"size:32;not null;index:idx_jobs_claim,priority:1"`
	InstallID         *string `gorm:"size:32;index"`
	Key               string  `gorm:"column:idempotency_key;size:400;not null;uniqueIndex"`
	Type              string  `gorm:"size:40;not null"`
	Manifest          string  `gorm:"type:text;not null"`
	Status            string  `gorm:"size:20;not null;index:idx_jobs_claim,priority:2"`
	Attempt           int     `gorm:"not null;default:0"`
	TimeoutMS         int64   `gorm:"not null;default:0"`
	LeaseExpiresAt    *time.Time
	CancelRequestedAt *time.Time
	ExitCode          *int
	Outputs           string    `gorm:"type:text"`
	Error             string    `gorm:"type:text"`
	CreatedAt         time.Time `gorm:"index:idx_jobs_claim,priority:3"`
	StartedAt         *time.Time
	FinishedAt        *time.Time
	UpdatedAt         time.Time
}

type v1JobAttempt struct {
	JobID      string `gorm:"primaryKey;size:32"`
	Attempt    int    `gorm:"primaryKey"`
	RunnerID   string `gorm:"size:32;not null"`
	Status     string `gorm:"size:20;not null"`
	ClaimedAt  time.Time
	FinishedAt *time.Time
	LastSeq    int64
	Error      string `gorm:"type:text"`
}

type v1JobEvent struct {
	ID        int64  `gorm:"primaryKey;autoIncrement"`
	JobID     string `gorm:"size:32;not null;index"`
	Attempt   int
	Status    string `gorm:"size:20;not null"`
	Message   string `gorm:"type:text"`
	CreatedAt time.Time
}

type v1JobLogChunk struct {
	JobID   string `gorm:"primaryKey;size:32"`
	Attempt int    `gorm:"primaryKey"`
	Seq     int64  `gorm:"primaryKey"`
	Stream  string `gorm:"size:10;not null"`
	Data    string `gorm:"type:text;not null"`
	Time    time.Time
}

type v1InstallCommand struct {
	ID         string   `gorm:"primaryKey;size:32"`
	OrgID      string   `gorm:"size:32;not null;index"`
	InstallID  string   `gorm:"size:32;not null;index"`
	Args       []string `gorm:"serializer:json;type:text"`
	TimeoutMS  int64
	WorkflowID string  `gorm:"size:300;not null"`
	JobID      *string `gorm:"size:32"`
	Status     string  `gorm:"size:20;not null"`
	ExitCode   *int
	Output     string `gorm:"type:text"`
	Error      string `gorm:"type:text"`
	CreatedAt  time.Time
	FinishedAt *time.Time
}

func (v1Org) TableName() string            { return "orgs" }
func (v1APIToken) TableName() string       { return "api_tokens" }
func (v1App) TableName() string            { return "apps" }
func (v1AppConfig) TableName() string      { return "app_configs" }
func (v1Component) TableName() string      { return "components" }
func (v1Install) TableName() string        { return "installs" }
func (v1InstallInput) TableName() string   { return "install_inputs" }
func (v1Runner) TableName() string         { return "runners" }
func (v1RunnerToken) TableName() string    { return "runner_tokens" }
func (v1Job) TableName() string            { return "jobs" }
func (v1JobAttempt) TableName() string     { return "job_attempts" }
func (v1JobEvent) TableName() string       { return "job_events" }
func (v1JobLogChunk) TableName() string    { return "job_log_chunks" }
func (v1InstallCommand) TableName() string { return "install_commands" }
