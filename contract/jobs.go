package contract

import (
	"encoding/json"

	"github.com/outpost-dev/outpost/contract/status"
)

// JobRef names an enqueued job.
type JobRef struct {
	JobID   string
	Created bool
}

// JobResult is how a job (or its latest attempt) ended.
type JobResult struct {
	JobID    string
	Status   status.Job // succeeded, failed, cancelled, lost
	Attempt  int
	ExitCode *int
	Outputs  json.RawMessage
	Error    string
}

// EnqueueJobInput is a job whose manifest needs no rendering (noop jobs for
// tests and benchmarks).
type EnqueueJobInput struct {
	Key       string
	InstallID string
	Type      string
	Manifest  json.RawMessage
	TimeoutMS int64
}

// TerraformJobInput names a terraform job of an operation's step; the
// manifest is rendered from the store, never carried in workflow history.
type TerraformJobInput struct {
	OperationID string
	Step        string // status.SandboxStep or a component name
	Operation   string // protocol.TerraformPlan, TerraformApply or TerraformPlanApply
	Destroy     bool
	PlanJobID   string // for apply: the plan job whose saved plan is applied
	Key         string
	// DeferInputs queues the job before its dependencies are done, its variables rendered later by
	// ProvideTerraformInputs; the runner fetches the module and runs init meanwhile.
	DeferInputs bool
	// SyncBuildID has a plan_apply job copy this build (the step's) into
	// the install's registry itself, instead of a sync job before it
	// (protocol.TerraformManifest.ModuleSync).
	SyncBuildID string
	// DeferRegistry, with DeferInputs and SyncBuildID: the install's
	// registry comes with the inputs (the sandbox, which provides it, is
	// not done yet when the job is queued).
	DeferRegistry bool
	// NoLock plans without terraform's state lock (a drift check).
	NoLock bool
}

// HelmJobInput names a helm job of an operation's step; the manifest is
// rendered from the store, never carried in workflow history.
type HelmJobInput struct {
	OperationID string
	Step        string
	Operation   string // protocol.HelmPlan, HelmDeploy or HelmUninstall
	Key         string
}

// SyncJobInput names the sync job of a step: the build to copy into the
// install's registry.
type SyncJobInput struct {
	OperationID string
	Step        string
	BuildID     string
	Key         string
}

// SyncSummary is how a sync ended.
type SyncSummary struct {
	Failed bool
	Error  string
}

// BuildSummary is what a workflow learns of a build (no credentials, no
// sources).
type BuildSummary struct {
	BuildID string
	Status  status.Build
	Digest  string
	Error   string
}

// ResolvedBuild is the build a component step deploys.
type ResolvedBuild struct {
	BuildSummary
	WorkflowID string
}

// CommandResult is what a debug command produced.
type CommandResult struct {
	Status          status.Job
	ExitCode        *int
	Output          string
	OutputTruncated bool
	Error           string
}

// SupportResult is how a support job ended (its outputs stay in the store).
type SupportResult struct {
	JobID  string
	Status status.Job
	Error  string
}

// RunnerUpdateEnd is how an update's workflow ended: Failure says why it
// failed before the health check; otherwise Health is the health job.
type RunnerUpdateEnd struct {
	Failure string
	Health  JobResult
}
