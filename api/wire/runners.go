package wire

import "time"

// Runner is a runner as the API shows it: who it is, and whether it is
// online.
type Runner struct {
	ID    string `json:"id" required:"true"`
	OrgID string `json:"org_id" required:"true"`
	// install or build
	Kind      string  `json:"kind" required:"true"`
	InstallID *string `json:"install_id" required:"true" nullable:"true"`
	Name      string  `json:"name"`
	Version   string  `json:"version" required:"true"`
	// "<os>_<arch>" as terraform names platforms (linux_amd64): builds vendor providers for it; "" when the runner
	// reported none (an older runner)
	Platform     string     `json:"platform" required:"true"`
	Capabilities []string   `json:"capabilities" required:"true"`
	RegisteredAt *time.Time `json:"registered_at" nullable:"true"`
	LastSeenAt   *time.Time `json:"last_seen_at" required:"true" nullable:"true"`
	Status       string     `json:"status" required:"true" enum:"online,offline"`
	// online: since its first call after a gap; offline: its last call; null when never seen
	StatusSince *time.Time `json:"status_since" required:"true" nullable:"true"`
	// its jobs under way
	RunningJobs int `json:"running_jobs" required:"true"`
	// its jobs waiting to be claimed
	QueuedJobs int `json:"queued_jobs" required:"true"`
	// the runner's latest failed calls to the gateway (dns, tls, proxy, network, http, clock), as it reported
	// them once it got through again, oldest first
	ConnectionErrors []ConnectionError `json:"connection_errors"`
	// the customer's policy, as the runner last reported it (null: an older runner that reports none)
	CustomerPolicy *CustomerPolicy `json:"customer_policy" nullable:"true"`
	// set while the customer has paused the runner: it claims no job, and operations wait
	PausedSince *time.Time `json:"paused_since,omitempty"`
	// the customer's consents that held when the runner last reported them
	Consents []Consent `json:"consents,omitempty"`
	// an update the runner holds back, its release verified, until its customer accepts it on the runner
	// (`outpost-runner update accept VERSION`): its latest update, when that is available
	UpdateAvailable *RunnerUpdate `json:"update_available,omitempty" nullable:"true"`
	// GET /runners/{id} only: its latest updates, newest first
	Updates   []RunnerUpdate `json:"updates,omitempty"`
	CreatedAt time.Time      `json:"created_at" required:"true"`
}

// RunnerList is the org's runners.
type RunnerList struct {
	Runners []Runner `json:"runners" required:"true"`
}

// ConnectionError is a call a runner failed to make to the gateway, as the
// runner reported it.
type ConnectionError struct {
	At      time.Time `json:"at" required:"true"`
	Kind    string    `json:"kind" required:"true" enum:"dns,tls,proxy,network,http,clock"`
	Message string    `json:"message" required:"true"`
}

// RegistrationToken is a runner's new one-time registration token.
type RegistrationToken struct {
	RunnerID          string `json:"runner_id" required:"true"`
	RegistrationToken string `json:"registration_token" required:"true"`
}

// RunnerVersion is a runner binary published into the vendor's registry.
type RunnerVersion struct {
	Version string `json:"version" required:"true"`
	// in the vendor's registry
	Repository string `json:"repository" required:"true"`
	// the artifact's manifest digest
	Digest string `json:"digest" required:"true"`
	// the executable's sha256 digest
	BinaryDigest string    `json:"binary_digest" required:"true"`
	Size         int64     `json:"size" required:"true"`
	CreatedAt    time.Time `json:"created_at" required:"true"`
}

// RunnerVersionList is the published runner versions, newest first.
type RunnerVersionList struct {
	Versions []RunnerVersion `json:"versions" required:"true"`
}

// RunnerPolicyRequest sets the runner version an org's (or an install's)
// runners should run; fields left out keep their value.
type RunnerPolicyRequest struct {
	// a published runner version; "" for none (an install then follows its org)
	Version *string `json:"version"`
	// installs only: the install's runner is not updated
	Pinned *bool    `json:"pinned"`
	_      struct{} `additionalProperties:"false"`
}

// RunnerPolicy is an install's (or, without install_id, the org's) runner
// version policy, and the version its runner should run.
type RunnerPolicy struct {
	InstallID string `json:"install_id,omitempty"`
	// the version the org wants
	OrgVersion string `json:"org_version" required:"true"`
	// the install's own version (overrides the org's)
	Version string `json:"version" required:"true"`
	Pinned  bool   `json:"pinned" required:"true"`
	// the version an update moves the runner to; "" when pinned or none is wanted
	Target string `json:"target" required:"true"`
}

// CreateRunnerUpdateRequest updates an install's runner.
type CreateRunnerUpdateRequest struct {
	// default: the install's target version (its own, else its org's)
	Version string `json:"version"`
	// how long the new runner has to report healthy before the old one rolls back
	HealthDeadlineSeconds *int `json:"health_deadline_seconds" minimum:"5" maximum:"3600" default:"120"`
	// how long the old runner waits for its running jobs before it hands over; past it the update fails and
	// the jobs go on
	DrainTimeoutSeconds *int     `json:"drain_timeout_seconds" minimum:"5" maximum:"86400" default:"3600"`
	_                   struct{} `additionalProperties:"false"`
}

// RunnerUpdate is one attempt to move an install's runner to a version.
type RunnerUpdate struct {
	ID          string `json:"id" required:"true"`
	OrgID       string `json:"org_id" required:"true"`
	InstallID   string `json:"install_id" required:"true"`
	RunnerID    string `json:"runner_id" required:"true"`
	FromVersion string `json:"from_version"`
	Version     string `json:"version" required:"true"`
	Digest      string `json:"digest" required:"true"`
	WorkflowID  string `json:"workflow_id" required:"true"`
	Status      string `json:"status" required:"true" enum:"running,succeeded,failed,available"`
	// why it failed (the runner's own report of its rollback when there is one); when available, that the
	// runner waits for its customer to accept the version
	Reason     string     `json:"reason,omitempty"`
	CreatedAt  time.Time  `json:"created_at" required:"true"`
	FinishedAt *time.Time `json:"finished_at,omitempty" nullable:"true"`
}
