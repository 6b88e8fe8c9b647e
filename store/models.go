package store

import (
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/maintenance"
	"github.com/outpost-dev/outpost/protocol"
)

// Org is a vendor (tenant). Everything else belongs to exactly one org.
type Org struct {
	ID        string    `gorm:"primaryKey;size:32" json:"id"`
	Name      string    `gorm:"size:200;not null;uniqueIndex" json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// APIToken authenticates calls to the control API on behalf of a user (or
// service account) of an org, within its scopes. A token with no UserID was
// made before users existed: it acts as an org admin.
type APIToken struct {
	ID        string `gorm:"primaryKey;size:32" json:"id"`
	OrgID     string `gorm:"size:32;not null;index" json:"org_id"`
	Name      string `gorm:"size:200;not null" json:"name"`
	TokenHash string `gorm:"size:64;not null;uniqueIndex" json:"-"`
	UserID    string `gorm:"size:32;not null;default:''" json:"user_id,omitempty"`
	// Scopes, comma-separated: read, deploy, approve, exec, admin.
	Scopes     string     `gorm:"size:100;not null;default:''" json:"scopes"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
}

// App is the vendor's product.
type App struct {
	ID          string `gorm:"primaryKey;size:32" json:"id"`
	OrgID       string `gorm:"size:32;not null;uniqueIndex:idx_apps_org_name" json:"org_id"`
	Name        string `gorm:"size:200;not null;uniqueIndex:idx_apps_org_name" json:"name"`
	Description string `gorm:"type:text" json:"description"`
	// FourEyes: the user who started an operation cannot approve its plans.
	FourEyes  bool      `gorm:"not null;default:false" json:"four_eyes"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// AppConfig is one synced version of an app's configuration directory.
type AppConfig struct {
	ID        string    `gorm:"primaryKey;size:32" json:"id"`
	OrgID     string    `gorm:"size:32;not null;index" json:"org_id"`
	AppID     string    `gorm:"size:32;not null;uniqueIndex:idx_app_configs_app_version" json:"app_id"`
	Version   int       `gorm:"not null;uniqueIndex:idx_app_configs_app_version" json:"version"`
	Content   string    `gorm:"type:text;not null" json:"-"`
	CreatedAt time.Time `json:"created_at"`
}

// Component is one deployable part of an app.
type Component struct {
	ID           string    `gorm:"primaryKey;size:32" json:"id"`
	OrgID        string    `gorm:"size:32;not null;index" json:"org_id"`
	AppID        string    `gorm:"size:32;not null;uniqueIndex:idx_components_app_name" json:"app_id"`
	Name         string    `gorm:"size:200;not null;uniqueIndex:idx_components_app_name" json:"name"`
	Type         string    `gorm:"size:40;not null" json:"type"`
	Dependencies []string  `gorm:"serializer:json;type:text" json:"dependencies"`
	Config       JSONMap   `gorm:"serializer:json;type:text" json:"config"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// JSONMap is a free-form JSON object stored as text.
type JSONMap map[string]any

// Install is one customer's copy of an app.
type Install struct {
	ID     string         `gorm:"primaryKey;size:32" json:"id"`
	OrgID  string         `gorm:"size:32;not null;uniqueIndex:idx_installs_org_name" json:"org_id"`
	AppID  string         `gorm:"size:32;not null;index" json:"app_id"`
	Name   string         `gorm:"size:200;not null;uniqueIndex:idx_installs_org_name" json:"name"`
	Status status.Install `gorm:"size:40;not null" json:"status"`
	// ApprovalMode says whether plans apply at once (approve-all) or wait for
	// an approval (prompt).
	ApprovalMode status.Approval `gorm:"size:20;not null;default:'approve-all'" json:"approval_mode"`
	Inputs       []InstallInput  `gorm:"foreignKey:InstallID;constraint:OnDelete:CASCADE" json:"inputs"`
	// InputsVersion counts the accepted changes of the inputs (1 at create).
	InputsVersion int `gorm:"not null;default:0" json:"inputs_version"`
	// ConfigVersion is the app config version the install runs: the one
	// its last provision, reprovision or deploy_config that succeeded
	// brought it to (0 before any).
	ConfigVersion int `gorm:"not null;default:0" json:"config_version"`
	// Labels select the install in a release (Kubernetes label syntax).
	Labels map[string]string `gorm:"serializer:json;type:text" json:"labels"`
	// MaintenanceWindows are when work the platform starts on its own may
	// run (none: at any time).
	MaintenanceWindows []maintenance.Window `gorm:"serializer:json;type:text" json:"maintenance_windows"`
	// DriftEvery is the drift schedule's interval ("" without one);
	// DriftReconcile applies drift found, under approve-all, in a window.
	DriftEvery     string    `gorm:"size:40;not null;default:''" json:"drift_every,omitempty"`
	DriftReconcile bool      `gorm:"not null;default:false" json:"drift_reconcile"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// InstallInput is one typed value an install is given. Sensitive values are
// never returned by the API.
type InstallInput struct {
	InstallID string `gorm:"primaryKey;size:32" json:"-"`
	Name      string `gorm:"primaryKey;size:200" json:"name"`
	Value     string `gorm:"type:text" json:"value"`
	Sensitive bool   `json:"sensitive"`
}

// Runner kinds.
const (
	RunnerKindInstall = "install"
	RunnerKindBuild   = "build"
)

// Runner is a runner's identity: one per install, one build runner per org.
type Runner struct {
	ID                    string     `gorm:"primaryKey;size:32" json:"id"`
	OrgID                 string     `gorm:"size:32;not null;index" json:"org_id"`
	InstallID             *string    `gorm:"size:32;uniqueIndex" json:"install_id,omitempty"`
	Kind                  string     `gorm:"size:20;not null" json:"kind"`
	Name                  string     `gorm:"size:200" json:"name"`
	RegistrationTokenHash *string    `gorm:"size:64;uniqueIndex" json:"-"`
	RegisteredAt          *time.Time `json:"registered_at,omitempty"`
	Version               string     `gorm:"size:100" json:"version"`
	// Platform is the runner's "<os>_<arch>" as it last reported it ("":
	// unknown, a runner older than the field).
	Platform     string     `gorm:"size:40;not null;default:''" json:"platform"`
	Capabilities []string   `gorm:"serializer:json;type:text" json:"capabilities"`
	LastSeenAt   *time.Time `json:"last_seen_at,omitempty"`
	// OnlineSince is when the runner's current unbroken contact began:
	// its first call after a gap longer than DefaultOnlineWindow.
	OnlineSince *time.Time `json:"online_since,omitempty"`
	// ConnectionErrors are the latest failed calls the runner reported
	// (its own view of why it was offline).
	ConnectionErrors []protocol.ConnectionError `gorm:"serializer:json;type:text" json:"connection_errors"`
	// CustomerPolicy, PausedSince and Consents are what the runner's
	// customer set, as the runner last reported them (never set here).
	CustomerPolicy *protocol.CustomerPolicy `gorm:"serializer:json;type:text" json:"customer_policy,omitempty"`
	PausedSince    *time.Time               `json:"paused_since,omitempty"`
	Consents       []protocol.Consent       `gorm:"serializer:json;type:text" json:"consents,omitempty"`
	CreatedAt      time.Time                `json:"created_at"`
}

// RunnerToken is a runner's access token to the gateway.
type RunnerToken struct {
	ID        string     `gorm:"primaryKey;size:32"`
	RunnerID  string     `gorm:"size:32;not null;index"`
	TokenHash string     `gorm:"size:64;not null;uniqueIndex"`
	CreatedAt time.Time  ``
	RevokedAt *time.Time ``
}

// Job is one unit of work for one runner.
type Job struct {
	ID                string     `gorm:"primaryKey;size:32" json:"id"`
	OrgID             string     `gorm:"size:32;not null;index" json:"org_id"`
	RunnerID          string     `gorm:"size:32;not null;index:idx_jobs_claim,priority:1" json:"runner_id"`
	InstallID         *string    `gorm:"size:32;index" json:"install_id,omitempty"`
	Key               string     `gorm:"column:idempotency_key;size:400;not null;uniqueIndex" json:"idempotency_key"`
	Type              string     `gorm:"size:40;not null" json:"type"`
	Manifest          string     `gorm:"type:text;not null" json:"-"`
	Status            status.Job `gorm:"size:20;not null;index:idx_jobs_claim,priority:2" json:"status"`
	Attempt           int        `gorm:"not null;default:0" json:"attempt"`
	TimeoutMS         int64      `gorm:"not null;default:0" json:"timeout_ms"`
	LeaseExpiresAt    *time.Time `json:"lease_expires_at,omitempty"`
	CancelRequestedAt *time.Time `json:"cancel_requested_at,omitempty"`
	ExitCode          *int       `json:"exit_code,omitempty"`
	Outputs           string     `gorm:"type:text" json:"-"`
	Error             string     `gorm:"type:text" json:"error,omitempty"`
	// InputsDeferred: queued before its inputs were known (JobSpec.InputsDeferred); Inputs, like the
	// manifest, may be secret and are never shown.
	InputsDeferred bool       `gorm:"not null;default:false" json:"inputs_deferred,omitempty"`
	Inputs         *string    `gorm:"type:text" json:"-"`
	InputsAt       *time.Time `json:"inputs_at,omitempty"`
	// InputsWaitMS bounds the wait for deferred inputs (JobSpec.InputsWaitMS).
	InputsWaitMS int64      `gorm:"not null;default:0" json:"inputs_wait_ms,omitempty"`
	CreatedAt    time.Time  `gorm:"index:idx_jobs_claim,priority:3" json:"created_at"`
	StartedAt    *time.Time `json:"started_at,omitempty"`
	FinishedAt   *time.Time `json:"finished_at,omitempty"`
	UpdatedAt    time.Time  `json:"updated_at"`
}

// JobAttempt is one claim of a job by a runner.
type JobAttempt struct {
	JobID    string `gorm:"primaryKey;size:32" json:"-"`
	Attempt  int    `gorm:"primaryKey" json:"attempt"`
	RunnerID string `gorm:"size:32;not null" json:"runner_id"`
	// RunnerVersion is the version of the runner that claimed it.
	RunnerVersion string     `gorm:"size:100;not null;default:''" json:"runner_version,omitempty"`
	Status        status.Job `gorm:"size:20;not null" json:"status"`
	ClaimedAt     time.Time  `json:"claimed_at"`
	FinishedAt    *time.Time `json:"finished_at,omitempty"`
	LastSeq       int64      `json:"last_seq"`
	Error         string     `gorm:"type:text" json:"error,omitempty"`
	// LogBytes is how much log the attempt stored; LogTruncated: it reached
	// protocol.MaxJobLogBytes and the rest was dropped.
	LogBytes     int64 `gorm:"not null;default:0" json:"-"`
	LogTruncated bool  `gorm:"not null;default:false" json:"log_truncated,omitempty"`
}

// JobEvent is one entry of a job's status history.
type JobEvent struct {
	ID        int64      `gorm:"primaryKey;autoIncrement" json:"-"`
	JobID     string     `gorm:"size:32;not null;index" json:"-"`
	Attempt   int        `json:"attempt"`
	Status    status.Job `gorm:"size:20;not null" json:"status"`
	Message   string     `gorm:"type:text" json:"message,omitempty"`
	CreatedAt time.Time  `json:"at"`
}

// JobLogChunk is one piece of a job attempt's output, stored once per
// (job, attempt, seq).
type JobLogChunk struct {
	JobID   string    `gorm:"primaryKey;size:32" json:"-"`
	Attempt int       `gorm:"primaryKey" json:"attempt"`
	Seq     int64     `gorm:"primaryKey" json:"seq"`
	Stream  string    `gorm:"size:10;not null" json:"stream"`
	Data    string    `gorm:"type:text;not null" json:"data"`
	Time    time.Time `json:"time"`
	// Sealed says Data is sealed at rest (a debug command's output).
	Sealed bool `gorm:"not null;default:false" json:"-"`
}

// InstallCommand is a debug command run on an install's runner.
type InstallCommand struct {
	ID         string     `gorm:"primaryKey;size:32" json:"id"`
	OrgID      string     `gorm:"size:32;not null;index" json:"org_id"`
	InstallID  string     `gorm:"size:32;not null;index" json:"install_id"`
	Args       []string   `gorm:"serializer:json;type:text" json:"args"`
	TimeoutMS  int64      `json:"timeout_ms"`
	WorkflowID string     `gorm:"size:300;not null" json:"workflow_id"`
	JobID      *string    `gorm:"size:32" json:"job_id,omitempty"`
	Status     status.Job `gorm:"size:20;not null" json:"status"`
	ExitCode   *int       `json:"exit_code,omitempty"`
	Output     string     `gorm:"type:text" json:"output"`
	Error      string     `gorm:"type:text" json:"error,omitempty"`
	// StartedBy is the API token that asked for it (its name).
	StartedBy  string     `gorm:"size:200;not null;default:''" json:"started_by,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

// SupportBundle is the diagnostics an install's runner collected on request (its archive is a
// SupportBundleArchive). Status follows its job's: queued, running, succeeded, failed, cancelled.
type SupportBundle struct {
	ID          string     `gorm:"primaryKey;size:32" json:"id"`
	OrgID       string     `gorm:"size:32;not null;index" json:"org_id"`
	InstallID   string     `gorm:"size:32;not null;index" json:"install_id"`
	WorkflowID  string     `gorm:"size:300;not null" json:"workflow_id"`
	JobID       *string    `gorm:"size:32;index" json:"job_id,omitempty"`
	Status      status.Job `gorm:"size:20;not null" json:"status"`
	Error       string     `gorm:"type:text" json:"error,omitempty"`
	Parts       []string   `gorm:"serializer:json;type:text" json:"parts"`
	Unavailable []string   `gorm:"serializer:json;type:text" json:"unavailable,omitempty"`
	SizeBytes   int64      `gorm:"not null;default:0" json:"size_bytes"`
	SHA256      string     `gorm:"column:sha256;size:64" json:"sha256,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	FinishedAt  *time.Time `json:"finished_at,omitempty"`
	ExpiresAt   time.Time  `gorm:"not null;index" json:"expires_at"`
}

// SupportBundleArchive is a support bundle's tar.gz, already redacted by the runner.
type SupportBundleArchive struct {
	BundleID  string    `gorm:"primaryKey;size:32"`
	Data      []byte    `gorm:"not null"`
	CreatedAt time.Time `gorm:"not null"`
}
