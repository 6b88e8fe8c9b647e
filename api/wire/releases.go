package wire

import (
	"encoding/json"
	"time"
)

// ReleaseTargets says which of the app's installs a release deploys:
// exactly one of all, ids, names or selector.
type ReleaseTargets struct {
	All   bool     `json:"all"`
	IDs   []string `json:"ids"`
	Names []string `json:"names"`
	// a Kubernetes label selector ("env=prod,tier!=free") or a map of labels that must all match
	Selector json.RawMessage `json:"selector"`
	_        struct{}        `additionalProperties:"false"`
}

// CreateReleaseRequest deploys a config version to some of an app's
// installs, in batches.
type CreateReleaseRequest struct {
	// the app config version to deploy; left out: the latest
	ConfigVersion *int           `json:"config_version"`
	Installs      ReleaseTargets `json:"installs" required:"true"`
	ReleasePacing
	_ struct{} `additionalProperties:"false"`
}

// ReleasePacing is how a release moves: its batch size, the pause between
// batches and the failures that halt it.
type ReleasePacing struct {
	// installs per batch (default 1)
	BatchSize *int `json:"batch_size"`
	// installs per batch as a percentage of those selected, rounded up (instead of batch_size)
	BatchPercent *int `json:"batch_percent"`
	// a Go duration, e.g. 30s
	PauseBetweenBatches string `json:"pause_between_batches"`
	// failed installs that halt the release (default 1)
	FailureThreshold *int `json:"failure_threshold"`
	// how long each batch's deployed installs must stay healthy after its deploys before the next batch, a Go duration (e.g. 10m; default 0: no health gate)
	Soak string `json:"soak"`
	// what a batch that does not stay healthy through its soak does: halt the release (default), or roll the batch back to the versions it ran before and then halt
	OnUnhealthy string `json:"on_unhealthy" enum:"halt,rollback"`
}

// Release is one config version rolled out to some of an app's installs, in
// batches, with each batch's installs.
type Release struct {
	ID    string `json:"id" required:"true"`
	AppID string `json:"app_id" required:"true"`
	// the version deployed (0 for a rollback: each install's to_version)
	ConfigVersion int `json:"config_version" required:"true"`
	// the release this one rolls back
	RollbackOf string `json:"rollback_of,omitempty"`
	// the installs asked for, as asked
	Installs            map[string]any `json:"installs" required:"true"`
	BatchSize           int            `json:"batch_size" required:"true"`
	PauseBetweenBatches string         `json:"pause_between_batches" required:"true"`
	FailureThreshold    int            `json:"failure_threshold" required:"true"`
	// how long each batch must stay healthy after its deploys ("0s": no health gate)
	Soak string `json:"soak" required:"true"`
	// what a batch that fails its health gate does (empty without a soak)
	OnUnhealthy string `json:"on_unhealthy,omitempty" enum:"halt,rollback"`
	WorkflowID  string `json:"workflow_id" required:"true"`
	Status      string `json:"status" required:"true" enum:"running,paused,halted,succeeded,cancelled"`
	// a pause was asked: the release stops before its next batch
	Paused bool `json:"paused" required:"true"`
	// why a halted release halted: the install that failed and why, or the install that failed its batch's health gate with its component, object and condition (and the batch's rollback)
	Error      string         `json:"error,omitempty"`
	Batches    []ReleaseBatch `json:"batches" required:"true"`
	CreatedAt  time.Time      `json:"created_at" required:"true"`
	FinishedAt *time.Time     `json:"finished_at" required:"true" nullable:"true"`
}

// ReleaseBatch is one batch of a release: its installs and where each is.
type ReleaseBatch struct {
	Batch    int              `json:"batch" required:"true"`
	Installs []ReleaseInstall `json:"installs" required:"true"`
	// one line per install, e.g. "cust-1: waiting for the maintenance window until …"
	Progress []string `json:"progress" required:"true"`
}

// ReleaseInstall is one install of a release: its batch, the version it ran
// before and the one the release brings it to, its deploy_config operation.
type ReleaseInstall struct {
	InstallID   string `json:"install_id" required:"true"`
	InstallName string `json:"install_name" required:"true"`
	Batch       int    `json:"batch" required:"true"`
	// the config version the install ran before the release deployed it (a rollback brings it back to it)
	FromVersion int `json:"from_version" required:"true"`
	// the config version the release brings it to
	ToVersion int `json:"to_version" required:"true"`
	// its deploy_config operation (the last, when a resume deployed it again)
	OperationID string `json:"operation_id,omitempty"`
	// the deploy_config that brought it back to from_version when its batch failed the health gate
	RollbackOperationID string `json:"rollback_operation_id,omitempty"`
	// unhealthy: deployed, but its batch's health gate failed on it; rolled_back: its batch failed the health gate and it was deployed back to from_version
	Status       string     `json:"status" required:"true" enum:"pending,waiting,running,succeeded,failed,skipped,unhealthy,rolled_back"`
	Error        string     `json:"error,omitempty"`
	WaitingUntil *time.Time `json:"waiting_until,omitempty"`
	UpdatedAt    time.Time  `json:"updated_at" required:"true"`
}

// ReleaseList is an app's releases, newest first.
type ReleaseList struct {
	Releases []Release `json:"releases" required:"true"`
}
