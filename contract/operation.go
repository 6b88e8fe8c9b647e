package contract

import (
	"time"

	"github.com/outpost-dev/outpost/contract/status"
)

// OperationPlan is what a workflow needs to run an operation: the steps in a
// deterministic order with their dependencies, and the statuses the install
// takes at the end. It carries no variables, outputs or secrets.
type OperationPlan struct {
	InstallID     string
	Kind          string
	ApprovalMode  status.Approval
	PlanOnly      bool
	ConfigVersion int
	// InMaintenanceWindow: wait for the install's maintenance window first.
	InMaintenanceWindow bool
	// DriftReconcile: a drift check whose install reconciles drift found
	// (drift_reconcile, under approve-all).
	DriftReconcile bool
	// Forget: a deprovision that lets the install go though a step cannot
	// destroy (the step is left behind, recorded, and the operation goes on).
	Forget        bool `json:",omitempty"`
	Steps         []StepSpec
	RunnerTimeout time.Duration
	JobWait       time.Duration

	SucceededInstallStatus   status.Install
	FailedInstallStatus      status.Install
	InterruptedInstallStatus status.Install
}

// StepSpec is one step of an operation and the steps it must wait for.
type StepSpec struct {
	Name    string
	After   []string
	Destroy bool
	// Type is the component's type ("" for the sandbox).
	Type string
	// Prestart says the step's terraform job may be queued while its dependencies still run,
	// its variables given once they are done (DeferInputs; docs/architecture/operations.md, Prestart).
	Prestart bool
	// PrestartBeforeSandbox says a Prestart step that syncs its own build (ModuleSync) may be queued
	// while the sandbox runs: it reads no sandbox output, and the registry comes with its variables.
	PrestartBeforeSandbox bool
	// Unchanged: an update_inputs, deploy_config or reconcile_drift step that
	// is not changed (renders as last applied; not drifted), downstream of no
	// changed step: it runs nothing.
	Unchanged bool
	// IfChanged: such a step after a changed one; it runs only if its job
	// renders differently once those have ended (StepRenderChanged).
	IfChanged bool
	// Hook: the step runs an action's lifecycle hook (an action run), not a
	// component (docs/architecture/action-runs.md, Hooks).
	Hook *Hook `json:",omitempty"`
}

// Hook is a hook step: the action it runs, before or after what.
type Hook struct {
	Action string
	// Trigger is "before" or "after".
	Trigger string
	// Component is the step of the component whose deploy or teardown the
	// hook surrounds ("" for the operation's own hook).
	Component string `json:",omitempty"`
	// When an after-hook runs: "success", "failure" or "always".
	When string `json:",omitempty"`
	// ContinueOnFailure: a before-hook whose failure stops nothing.
	ContinueOnFailure bool `json:",omitempty"`
}

// RunnerCheck is RunnerOnline's answer.
type RunnerCheck struct {
	Online bool
	Runner RunnerInfo
}

// RunnerInfo is what an operation learns of the install's runner once it is
// online.
type RunnerInfo struct {
	// DeferredInputs: it runs jobs queued before their inputs are known
	// (protocol.CapabilityDeferredInputs).
	DeferredInputs bool
	// ModuleSync: its terraform jobs copy their module's build into the
	// install's registry themselves (protocol.CapabilityModuleSync).
	ModuleSync bool
}

// PlanSummary is what the workflow learns of a plan (the plan itself stays
// in the store).
type PlanSummary struct {
	HasChanges           bool
	Add, Change, Destroy int
	// Applied: a plan_apply job applied the plan.
	Applied bool
	Failed  bool
	Error   string
}

// ApplySummary is what the workflow learns of an apply.
type ApplySummary struct {
	Failed bool
	Error  string
}

// Window is an install's maintenance window as an activity saw it: the one
// open now (Open) or the next one to open. None says the install has no
// windows: work may run at any time.
type Window struct {
	None       bool
	Open       bool
	Start, End time.Time
}

// Reconcile is the operation a drift check started to apply the drift it
// found, or why it started none.
type Reconcile struct {
	OperationID, WorkflowID string
	NotStarted              string
}

// ReleasePlan is what a release's workflow needs: its installs by batch (IDs
// only) and its pacing.
type ReleasePlan struct {
	Batches          [][]string
	PauseBetween     time.Duration
	FailureThreshold int
	// Soak is how long a batch's deployed installs must stay healthy
	// before the next batch (0: no health gate); OnUnhealthy what a batch
	// that does not does (OnUnhealthyHalt or OnUnhealthyRollback).
	Soak        time.Duration
	OnUnhealthy string
}

// What a release does when a batch fails its health gate.
const (
	OnUnhealthyHalt     = "halt"     // halt the release
	OnUnhealthyRollback = "rollback" // roll the batch back, then halt
)

// InstallHealth is an install's health as a release's health gate reads it:
// its state (protocol.Health*) and why (component, object, condition).
type InstallHealth struct {
	InstallID, InstallName       string
	State                        string
	Component, Object, Condition string
}

// ReleaseDeploy is an install's deploy in a release: its deploy_config
// operation, or why it could not start (Failed).
type ReleaseDeploy struct {
	OperationID, WorkflowID string
	Failed                  string
}

// ErrRunnerPaused is the type of WaitForRunner's error when it hands the
// wait for a runner its customer paused back to the workflow, which waits
// again: a pause never fails an operation.
const ErrRunnerPaused = "RunnerPaused"

// RunnerPausedReason is why an operation waits on a runner its customer
// paused at since.
func RunnerPausedReason(since time.Time) string {
	return "runner paused by the customer since " + since.UTC().Format(time.RFC3339)
}
