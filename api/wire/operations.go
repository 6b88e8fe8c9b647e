package wire

import (
	"time"

	"github.com/outpost-dev/outpost/protocol"
)

// OperationRequest starts an operation on an install.
type OperationRequest struct {
	// plan every step and stop
	PlanOnly bool `json:"plan_only"`
	// component operations: include the components that depend on it
	WithDependents bool `json:"with_dependents"`
	// deprovision only: a step that cannot destroy (the install's account changed under it, a stand-in is gone) does
	// not fail the deprovision: it ends left_behind, naming what it left (left_behind), the install forgets it, and
	// the deprovision goes on; the install ends deprovisioned. Not with plan_only
	Forget bool `json:"forget"`
	WindowOption
	_ struct{} `additionalProperties:"false"`
}

// WindowOption is what an operation's request says about the install's
// maintenance windows.
type WindowOption struct {
	// wait for the install's next maintenance window before running (at once when one is open or the install
	// has none); meanwhile the operation is waiting_for_maintenance_window until waiting_until, and holds the
	// install (cancel it to run another). Left out: run at once
	InMaintenanceWindow bool `json:"in_maintenance_window"`
}

// DeployConfigRequest brings an install to a config version.
type DeployConfigRequest struct {
	// the app config version to bring the install to (1, 2, …); left out: the latest
	ConfigVersion *int `json:"config_version"`
	// plan the changed steps and stop
	PlanOnly bool `json:"plan_only"`
	WindowOption
	_ struct{} `additionalProperties:"false"`
}

// Operation is one mutating operation on an install (a workflow), with its
// steps.
type Operation struct {
	ID        string `json:"id" required:"true"`
	OrgID     string `json:"org_id"`
	InstallID string `json:"install_id" required:"true"`
	// provision, deprovision, reprovision, deploy_component, teardown_component, update_inputs, deploy_config,
	// drift_check, reconcile_drift, offline_deploy (an offline deploy's result, imported)
	Kind      string `json:"kind" required:"true"`
	Component string `json:"component,omitempty"`
	// a component's deploy or teardown: the components that depend on it too
	WithDependents bool   `json:"with_dependents,omitempty"`
	PlanOnly       bool   `json:"plan_only"`
	ApprovalMode   string `json:"approval_mode"`
	ConfigVersion  int    `json:"config_version"`
	WorkflowID     string `json:"workflow_id" required:"true"`
	// running, waiting_for_maintenance_window, waiting_for_runner, succeeded, failed, cancelled, denied
	Status string `json:"status" required:"true"`
	// a deprovision that forgets what it cannot destroy: its steps that could not end left_behind
	Forget bool `json:"forget,omitempty"`
	// the operation waits for the install's maintenance window before it runs
	InMaintenanceWindow bool `json:"in_maintenance_window,omitempty"`
	// while waiting_for_maintenance_window: when the window opens and the operation runs
	WaitingUntil *time.Time `json:"waiting_until,omitempty"`
	// the operation that started this one: a reconcile_drift's drift check
	TriggeredBy string `json:"triggered_by,omitempty"`
	// where it ran: offline for an offline deploy imported from its result (no workflow ran it: workflow_id is
	// empty); left out for the install's runner
	Source string `json:"source,omitempty"`
	// an offline deploy: the digest of the signed bundle index it deployed
	BundleIndex string `json:"bundle_index,omitempty"`
	// who started it: the user's name (a token's, for a token made before users); empty for the platform
	StartedBy string `json:"started_by,omitempty"`
	// while it waits: why, e.g. "runner paused by the customer since …"
	WaitingReason string     `json:"waiting_reason,omitempty"`
	Error         string     `json:"error,omitempty"`
	CreatedAt     time.Time  `json:"created_at"`
	FinishedAt    *time.Time `json:"finished_at,omitempty"`
	Steps         []Step     `json:"steps,omitempty"`
}

// Step is one user-visible step of an operation: the sandbox or one
// component, planned then applied, or a lifecycle hook running an action
// ("before:migrate", "after:warm:api").
type Step struct {
	ID      string `json:"id"`
	Name    string `json:"name" required:"true"`
	Destroy bool   `json:"destroy"`
	// the steps this one runs after (for a destroy, the reverse of the dependencies)
	After []string `json:"after"`
	// pending, building, syncing, planning, waiting_approval, applying, succeeded, no_changes, planned, failed,
	// skipped, denied, cancelled, unchanged (update_inputs, deploy_config: its build and job are as last applied;
	// nothing ran), drifted (drift_check: its plan is not empty), left_behind (a deprovision with forget could not
	// destroy it: error says why, left_behind what is left)
	Status string `json:"status" required:"true"`
	// the plan job (under approve-all, the one job that plans and applies: equal to apply_job_id)
	PlanJobID  *string `json:"plan_job_id,omitempty"`
	ApplyJobID *string `json:"apply_job_id,omitempty"`
	// the build a component step deploys
	BuildID *string `json:"build_id,omitempty"`
	// the job that copied the build into the install's registry
	SyncJobID    *string `json:"sync_job_id,omitempty"`
	HasChanges   *bool   `json:"has_changes,omitempty"`
	Add          int     `json:"add"`
	Change       int     `json:"change"`
	DestroyCount int     `json:"destroy_count"`
	// the plan, as text (sensitive values redacted): terraform's, or a helm chart's diff of objects
	Plan string `json:"plan,omitempty"`
	// what each plan policy said of the plan (the vendor's, then the customer's); none when no policy ran
	Policies []PolicyResult `json:"policies,omitempty"`
	// the decision on its plan: approved or denied (empty: none yet, or none needed)
	Decision string `json:"decision,omitempty"`
	// who decided: the user's name (a token's, for a token made before users)
	DecidedBy string     `json:"decided_by,omitempty"`
	DecidedAt *time.Time `json:"decided_at,omitempty"`
	// what is left of the step where the install ran (the resources in its terraform state by address,
	// or its helm release and the objects its last deploy recorded); the install no longer knows them
	LeftBehind []string   `json:"left_behind,omitempty"`
	Error      string     `json:"error,omitempty"`
	StartedAt  *time.Time `json:"started_at,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

// PolicyResult is what one plan policy (a Rego package) said of a step's plan:
// the runner's report as it is.
type PolicyResult = protocol.PolicyResult

// OperationList is an install's operations, newest first.
type OperationList struct {
	Operations []Operation `json:"operations" required:"true"`
}

// Decision is the approval or denial of a step's plan.
type Decision struct {
	OperationID string `json:"operation_id" required:"true"`
	Step        string `json:"step" required:"true"`
	// approved or denied
	Decision string `json:"decision" required:"true"`
	// who decided: the user's name (a token's, for a token made before users)
	DecidedBy string `json:"decided_by,omitempty"`
}

// MaintenanceWindow is weekly hours in which the platform may change an
// install on its own.
type MaintenanceWindow struct {
	// mon, tue, wed, thu, fri, sat, sun
	Days []string `json:"days" required:"true"`
	// local time of day HH:MM in time_zone; on a day the clock skips it, the window opens when the clock jumps
	// past it; on one it reads it twice, at the first
	Start string `json:"start" required:"true"`
	// elapsed time (a Go duration: 30m, 4h, 1h30m), more than 0 and at most 168h
	Duration string `json:"duration" required:"true"`
	// an IANA time zone, e.g. Europe/Berlin or UTC
	TimeZone string `json:"time_zone" required:"true"`
}

// MaintenanceWindowsRequest replaces an install's maintenance windows.
type MaintenanceWindowsRequest struct {
	// replaces the install's windows; empty: none (work may run at any time)
	Windows []MaintenanceWindow `json:"windows" required:"true"`
	_       struct{}            `additionalProperties:"false"`
}

// MaintenanceWindows is an install's maintenance windows and the one open
// now or next.
type MaintenanceWindows struct {
	Windows []MaintenanceWindow `json:"windows" required:"true"`
	// the window open now, or the next to open; null without windows
	Next *NextWindow `json:"next" required:"true" nullable:"true"`
}

// NextWindow is one opening of a maintenance window.
type NextWindow struct {
	// a window is open now (start is in the past)
	Open  bool      `json:"open" required:"true"`
	Start time.Time `json:"start" required:"true"`
	End   time.Time `json:"end" required:"true"`
}

// DriftScheduleRequest sets an install's schedule of drift checks.
type DriftScheduleRequest struct {
	// a duration (30m, 6h): one check each; "" or "0": no schedule
	Every string `json:"every" required:"true"`
	// under approve-all, apply the drift a check finds (a reconcile_drift operation: the drifted steps and
	// what follows them), inside the install's maintenance window
	Reconcile bool     `json:"reconcile"`
	_         struct{} `additionalProperties:"false"`
}

// DriftSchedule is an install's schedule of drift checks.
type DriftSchedule struct {
	// a duration (30m, 6h): one check each; "" or "0": no schedule
	Every string `json:"every" required:"true"`
	// under approve-all, apply the drift a check finds (a reconcile_drift operation: the drifted steps and
	// what follows them), inside the install's maintenance window
	Reconcile bool `json:"reconcile" required:"true"`
}

// Drift is an install's drift schedule and what its checks found.
type Drift struct {
	DriftSchedule
	Components []DriftedPart `json:"components" required:"true"`
}

// DriftedPart is what the last drift check (or a later apply) found of an
// install's sandbox or component.
type DriftedPart struct {
	// sandbox or a terraform component
	Name    string `json:"name" required:"true"`
	Drifted bool   `json:"drifted" required:"true"`
	// when a check first found it drifted
	Since *time.Time `json:"since,omitempty"`
	// the plan that would bring it back (terraform's text, sensitive values redacted)
	Plan string `json:"plan,omitempty"`
	// the check that found it, or the operation whose apply cleared it
	OperationID string    `json:"operation_id" required:"true"`
	CheckedAt   time.Time `json:"checked_at" required:"true"`
}
