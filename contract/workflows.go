package contract

import (
	"time"

	"github.com/outpost-dev/outpost/contract/status"
)

// Workflow names: the worker registers each workflow under its name, and
// clients start them by it.
const (
	WorkflowProvisionInstall   = "ProvisionInstall"
	WorkflowDeprovisionInstall = "DeprovisionInstall"
	WorkflowReprovisionInstall = "ReprovisionInstall"
	WorkflowDeployComponent    = "DeployComponent"
	WorkflowTeardownComponent  = "TeardownComponent"
	WorkflowUpdateInputs       = "UpdateInputs"
	WorkflowDeployConfig       = "DeployConfig"
	WorkflowDriftCheck         = "DriftCheck"
	WorkflowReconcileDrift     = "ReconcileDrift"
	WorkflowBuildComponent     = "BuildComponent"
	WorkflowRelease            = "Release"
	WorkflowInstallCommand     = "InstallCommand"
	WorkflowUpdateRunner       = "UpdateRunner"
	WorkflowSupportBundle      = "SupportBundle"
	WorkflowKubeLogs           = "KubeLogs"
)

// OperationWorkflows names the workflow of each operation kind: it takes an
// OperationInput and returns an OperationResult.
var OperationWorkflows = map[string]string{
	OpProvision:         WorkflowProvisionInstall,
	OpDeprovision:       WorkflowDeprovisionInstall,
	OpReprovision:       WorkflowReprovisionInstall,
	OpDeployComponent:   WorkflowDeployComponent,
	OpTeardownComponent: WorkflowTeardownComponent,
	OpUpdateInputs:      WorkflowUpdateInputs,
	OpDeployConfig:      WorkflowDeployConfig,
	OpDriftCheck:        WorkflowDriftCheck,
	OpReconcileDrift:    WorkflowReconcileDrift,
}

// OperationInput names the operation; everything else is in the store.
type OperationInput struct {
	OperationID string
	// InstallID: a drift check a schedule started, which records its
	// operation itself (OperationID is then empty).
	InstallID string `json:",omitempty"`
}

// OperationResult is how each step ended (no outputs: they may be secret).
type OperationResult struct {
	Status status.Op
	Steps  map[string]status.Step
	Error  string
	// LeftBehind is, for each step a deprovision with forget could not
	// destroy, what it left behind (terraform resources, a helm release).
	LeftBehind map[string][]string `json:",omitempty"`
}

// ApprovalSignal is the signal that approves or denies a waiting plan.
const ApprovalSignal = "approval"

// Approval is the payload of ApprovalSignal.
type Approval struct {
	Step    string
	Approve bool
}

// BuildInput names the build; everything else is in the store.
type BuildInput struct {
	BuildID string
}

// ReleaseInput names the release; everything else is in the store.
type ReleaseInput struct {
	ReleaseID string
}

// ReleaseSignal pauses, resumes or cancels a release.
const ReleaseSignal = "release"

// Release control actions (ReleaseControl.Action).
const (
	ReleasePause  = "pause"
	ReleaseResume = "resume"
	ReleaseCancel = "cancel"
)

// ReleaseControl is the payload of ReleaseSignal.
type ReleaseControl struct {
	Action string
}

// InstallCommandInput names the command; its arguments stay in the store.
type InstallCommandInput struct {
	InstallID string
	CommandID string
	TimeoutMS int64
}

// InstallCommandResult is what the command produced: it is the workflow's
// result, so the Temporal UI shows exit code and output.
type InstallCommandResult struct {
	CommandID string
	JobID     string
	Attempts  int
	CommandResult
}

// RunnerUpdateInput names the update; the rest stays in the store.
type RunnerUpdateInput struct {
	UpdateID string
	// HealthDeadline is how long the new runner has to be healthy.
	HealthDeadline time.Duration
	// DrainTimeout is how long the old runner waits for its running jobs
	// before it hands over (0: protocol.DefaultDrainTimeout).
	DrainTimeout time.Duration
}

// SupportBundleInput names the bundle; everything else stays in the store.
type SupportBundleInput struct {
	InstallID string
	BundleID  string
}

// SupportBundleResult is the workflow's result: which job collected the
// bundle and how it ended (what the archive holds is in the store, never in
// history).
type SupportBundleResult struct {
	BundleID string
	JobID    string
	Attempts int
	Status   status.Job
	Error    string
}

// KubeLogsRequest is a logs request, the KubeLogs workflow's input: none of
// it is secret, so it travels in workflow history.
type KubeLogsRequest struct {
	InstallID    string
	Namespace    string
	Workload     string
	SinceSeconds int64
	TailLines    int64
}
