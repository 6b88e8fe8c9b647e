package contract

import (
	"context"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
)

// Signatures declares every activity: its name and Go signature, as a typed
// nil func. The worker registers exactly these (worker checks it), and the
// workflows' tests register stubs of them.
var Signatures = map[string]any{
	// Jobs: the one way a workflow reaches a runner (RunJob).
	EnqueueJob: (func(context.Context, EnqueueJobInput) (JobRef, error))(nil),
	AwaitJob:   (func(context.Context, string, bool) (JobResult, error))(nil),
	RetryJob:   (func(context.Context, string, int) error)(nil),
	CancelJob:  (func(context.Context, string, string) error)(nil),

	// Operations: an install operation's plan, runner, steps and end.
	BeginOperation:    (func(context.Context, string) (OperationPlan, error))(nil),
	RunnerOnline:      (func(context.Context, string) (RunnerCheck, error))(nil),
	WaitForRunner:     (func(context.Context, string, time.Duration) (RunnerInfo, error))(nil),
	SetStepStatus:     (func(context.Context, string, string, status.Step, string) error)(nil),
	StepRenderChanged: (func(context.Context, string, string) (bool, error))(nil),
	StepDecision:      (func(context.Context, string, string) (status.Decision, error))(nil),
	FinishOperation:   (func(context.Context, string, status.Op, string, status.Install) error)(nil),
	LeaveBehind:       (func(context.Context, string, string, string) ([]string, error))(nil),

	// Maintenance windows.
	NextMaintenanceWindow: (func(context.Context, string) (Window, error))(nil),
	SetOperationWaiting:   (func(context.Context, string, *time.Time) error)(nil),

	// Terraform steps.
	EnqueueTerraformJob:    (func(context.Context, TerraformJobInput) (JobRef, error))(nil),
	ProvideTerraformInputs: (func(context.Context, TerraformJobInput, string) error)(nil),
	RecordPlan:             (func(context.Context, string, string, string) (PlanSummary, error))(nil),
	RecordPlanApply:        (func(context.Context, string, string, string) (PlanSummary, error))(nil),
	RecordApply:            (func(context.Context, string, string, string) (ApplySummary, error))(nil),

	// Helm chart steps.
	EnqueueHelmJob:    (func(context.Context, HelmJobInput) (JobRef, error))(nil),
	RecordHelmPlan:    (func(context.Context, string, string, string) (PlanSummary, error))(nil),
	PlanUninstall:     (func(context.Context, string, string) (PlanSummary, error))(nil),
	RecordHelmRelease: (func(context.Context, string, string, string) (ApplySummary, error))(nil),

	// Builds.
	EnqueueBuildJob: (func(context.Context, string, string) (JobRef, error))(nil),
	RecordBuild:     (func(context.Context, string, string) (BuildSummary, error))(nil),
	FailBuild:       (func(context.Context, string, string) error)(nil),
	ResolveBuild:    (func(context.Context, string, string) (ResolvedBuild, error))(nil),
	AwaitBuild:      (func(context.Context, string) (BuildSummary, error))(nil),

	// Syncs of builds into the install's registry, and images.
	EnqueueSyncJob:  (func(context.Context, SyncJobInput) (JobRef, error))(nil),
	RecordSync:      (func(context.Context, string, string, string, string) (SyncSummary, error))(nil),
	RecordImage:     (func(context.Context, string, string) error)(nil),
	ForgetComponent: (func(context.Context, string, string) error)(nil),

	// Drift checks and their reconciles.
	BeginDriftCheck:     (func(context.Context, string, string) (string, error))(nil),
	EnqueueSyncPlanJob:  (func(context.Context, SyncJobInput) (JobRef, error))(nil),
	RecordDrift:         (func(context.Context, string, string, string) (PlanSummary, error))(nil),
	RecordHelmDrift:     (func(context.Context, string, string, string) (PlanSummary, error))(nil),
	RecordImageDrift:    (func(context.Context, string, string, string) (PlanSummary, error))(nil),
	RecordSyncPlan:      (func(context.Context, string, string, string) (PlanSummary, error))(nil),
	BeginDriftReconcile: (func(context.Context, string) (Reconcile, error))(nil),

	// Releases.
	LoadRelease:                 (func(context.Context, string) (ReleasePlan, error))(nil),
	BeginReleaseDeploy:          (func(context.Context, string, string) (ReleaseDeploy, error))(nil),
	FinishReleaseDeploy:         (func(context.Context, string, string, string, string) (string, error))(nil),
	WaitForWindow:               (func(context.Context, string, string, time.Time) error)(nil),
	SetReleaseStatus:            (func(context.Context, string, status.Release, string) error)(nil),
	SkipReleaseInstalls:         (func(context.Context, string) error)(nil),
	ReleaseBatchHealth:          (func(context.Context, string, []string) ([]InstallHealth, error))(nil),
	MarkReleaseInstallUnhealthy: (func(context.Context, string, string, string) error)(nil),
	BeginReleaseRollback:        (func(context.Context, string, string) (ReleaseDeploy, error))(nil),
	FinishReleaseRollback:       (func(context.Context, string, string, string, string) (string, error))(nil),

	// Notifications.
	DeliverNotification: (func(context.Context, string) error)(nil),
	FinishNotification:  (func(context.Context, string, bool) error)(nil),

	// Debug commands.
	EnqueueCommandJob: (func(context.Context, string, string) (JobRef, error))(nil),
	FinishCommand:     (func(context.Context, string, CommandResult) error)(nil),

	// Action runs.
	RecordActionRun:      (func(context.Context, string, string, string) (string, error))(nil),
	LoadActionRun:        (func(context.Context, string) (ActionRunPlan, error))(nil),
	EnqueueActionStepJob: (func(context.Context, string, int, string) (JobRef, error))(nil),
	FinishActionStep:     (func(context.Context, string, int, JobResult) (status.Job, error))(nil),
	FinishActionRun:      (func(context.Context, string, status.Job, string) error)(nil),
	RecordHookRun:        (func(context.Context, string, string) (ActionRunPlan, error))(nil),

	// Runbook runs: (run ID[, step index]).
	LoadRunbookRun:      (func(context.Context, string) (RunbookRunPlan, error))(nil),
	BeginRunbookStep:    (func(context.Context, string, int) (RunbookStepStart, error))(nil),
	FinishRunbookStep:   (func(context.Context, string, int, string) (RunbookStepEnd, error))(nil),
	RunbookGateApproved: (func(context.Context, string, int) (bool, error))(nil),
	FinishRunbookRun:    (func(context.Context, string, status.Job, string) error)(nil),

	// Support bundles and logs.
	EnqueueSupportJob:   (func(context.Context, string, string) (JobRef, error))(nil),
	FinishSupportBundle: (func(context.Context, string, SupportResult) error)(nil),
	EnqueueKubeLogsJob:  (func(context.Context, KubeLogsRequest, string) (JobRef, error))(nil),

	// Runner updates.
	EnqueueRunnerSyncJob:   (func(context.Context, string, string) (JobRef, error))(nil),
	EnqueueRunnerUpdateJob: (func(context.Context, string, string, time.Duration, time.Duration) (JobRef, error))(nil),
	EnqueueRunnerHealthJob: (func(context.Context, string, string) (JobRef, error))(nil),
	FinishRunnerUpdate:     (func(context.Context, string, RunnerUpdateEnd) (string, error))(nil),

	// Action schedules: (install ID, config version).
	ReconcileActionSchedules: (func(context.Context, string, int) error)(nil),
}
