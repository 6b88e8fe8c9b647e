package wire

import "time"

// SupportBundle is the diagnostics an install's runner collected on request;
// its archive is downloaded on its own.
type SupportBundle struct {
	ID         string  `json:"id" required:"true"`
	InstallID  string  `json:"install_id" required:"true"`
	WorkflowID string  `json:"workflow_id" required:"true"`
	JobID      *string `json:"job_id,omitempty"`
	Status     string  `json:"status" required:"true" enum:"queued,running,succeeded,failed,cancelled"`
	Error      string  `json:"error,omitempty"`
	// the archive's files (below bundle/)
	Parts []string `json:"parts" required:"true"`
	// parts that could not be collected, with why
	Unavailable []string `json:"unavailable,omitempty"`
	SizeBytes   int64    `json:"size_bytes" required:"true"`
	SHA256      string   `json:"sha256,omitempty"`
	// where the archive (application/gzip) is, once the bundle succeeded
	DownloadURL string     `json:"download_url,omitempty"`
	CreatedAt   time.Time  `json:"created_at" required:"true"`
	FinishedAt  *time.Time `json:"finished_at,omitempty"`
	// when the bundle is deleted
	ExpiresAt time.Time `json:"expires_at" required:"true"`
}

// SupportBundleList is an install's support bundles that have not expired.
type SupportBundleList struct {
	SupportBundles []SupportBundle `json:"support_bundles" required:"true"`
}

// CreateLogsRequest reads one namespace's (or workload's) events and
// container logs since a time, on an install's runner.
type CreateLogsRequest struct {
	// the namespace whose events and container logs to read
	Namespace string `json:"namespace" required:"true"`
	// only the pods whose name starts with this (a Deployment's, or a Pod's name)
	Workload     string   `json:"workload"`
	SinceSeconds *int64   `json:"since_seconds" minimum:"1" maximum:"604800" default:"3600"`
	TailLines    *int64   `json:"tail_lines" minimum:"1" maximum:"100000"`
	_            struct{} `additionalProperties:"false"`
}

// LogsRequest is a logs request as started: follow its job's logs for the
// answer.
type LogsRequest struct {
	ID         string `json:"id" required:"true"`
	InstallID  string `json:"install_id" required:"true"`
	WorkflowID string `json:"workflow_id" required:"true"`
	// the kube_logs job whose log lines are the answer
	JobID string `json:"job_id" required:"true"`
	// follow them here
	LogsURL string `json:"logs_url" required:"true"`
}
