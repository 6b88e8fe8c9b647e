package contract

// Activity names: each is registered (by the worker) and called (by the
// workflows) under its name; Signatures declares its arguments and result.
const (
	// Jobs: the one way a workflow reaches a runner (RunJob).
	EnqueueJob = "EnqueueJob"
	AwaitJob   = "AwaitJob"
	RetryJob   = "RetryJob"
	CancelJob  = "CancelJob"

	// Operations: an install operation's plan, runner, steps and end.
	BeginOperation    = "BeginOperation"
	RunnerOnline      = "RunnerOnline"
	WaitForRunner     = "WaitForRunner"
	SetStepStatus     = "SetStepStatus"
	StepRenderChanged = "StepRenderChanged"
	StepDecision      = "StepDecision"
	FinishOperation   = "FinishOperation"
	// LeaveBehind records what a step of a deprovision with forget could
	// not destroy, and forgets it.
	LeaveBehind = "LeaveBehind"

	// Notifications: one try of a delivery, and its final state.
	DeliverNotification = "DeliverNotification"
	FinishNotification  = "FinishNotification"

	// Maintenance windows.
	NextMaintenanceWindow = "NextMaintenanceWindow"
	SetOperationWaiting   = "SetOperationWaiting"

	// Terraform steps.
	EnqueueTerraformJob    = "EnqueueTerraformJob"
	ProvideTerraformInputs = "ProvideTerraformInputs"
	RecordPlan             = "RecordPlan"
	RecordPlanApply        = "RecordPlanApply"
	RecordApply            = "RecordApply"

	// Helm chart steps.
	EnqueueHelmJob    = "EnqueueHelmJob"
	RecordHelmPlan    = "RecordHelmPlan"
	PlanUninstall     = "PlanUninstall"
	RecordHelmRelease = "RecordHelmRelease"

	// Builds.
	EnqueueBuildJob = "EnqueueBuildJob"
	RecordBuild     = "RecordBuild"
	FailBuild       = "FailBuild"
	ResolveBuild    = "ResolveBuild"
	AwaitBuild      = "AwaitBuild"

	// Syncs of builds into the install's registry, and images.
	EnqueueSyncJob  = "EnqueueSyncJob"
	RecordSync      = "RecordSync"
	RecordImage     = "RecordImage"
	ForgetComponent = "ForgetComponent"

	// Drift checks and their reconciles.
	BeginDriftCheck     = "BeginDriftCheck"
	EnqueueSyncPlanJob  = "EnqueueSyncPlanJob"
	RecordDrift         = "RecordDrift"
	RecordHelmDrift     = "RecordHelmDrift"
	RecordImageDrift    = "RecordImageDrift"
	RecordSyncPlan      = "RecordSyncPlan"
	BeginDriftReconcile = "BeginDriftReconcile"

	// Releases.
	LoadRelease         = "LoadRelease"
	BeginReleaseDeploy  = "BeginReleaseDeploy"
	FinishReleaseDeploy = "FinishReleaseDeploy"
	WaitForWindow       = "WaitForWindow"
	SetReleaseStatus    = "SetReleaseStatus"
	SkipReleaseInstalls = "SkipReleaseInstalls"
	// A release's health gate (soak, on_unhealthy).
	ReleaseBatchHealth          = "ReleaseBatchHealth"
	MarkReleaseInstallUnhealthy = "MarkReleaseInstallUnhealthy"
	BeginReleaseRollback        = "BeginReleaseRollback"
	FinishReleaseRollback       = "FinishReleaseRollback"

	// Debug commands.
	EnqueueCommandJob = "EnqueueCommandJob"
	FinishCommand     = "FinishCommand"

	// Action runs.
	RecordActionRun      = "RecordActionRun"
	LoadActionRun        = "LoadActionRun"
	EnqueueActionStepJob = "EnqueueActionStepJob"
	FinishActionStep     = "FinishActionStep"
	FinishActionRun      = "FinishActionRun"
	RecordHookRun        = "RecordHookRun"

	// Runbook runs.
	LoadRunbookRun   = "LoadRunbookRun"
	BeginRunbookStep = "BeginRunbookStep"
	// RunbookGateApproved reads whether a gate's approval is recorded: a
	// signal alone approves nothing.
	RunbookGateApproved = "RunbookGateApproved"
	FinishRunbookStep   = "FinishRunbookStep"
	FinishRunbookRun    = "FinishRunbookRun"

	// Support bundles and logs.
	EnqueueSupportJob   = "EnqueueSupportJob"
	FinishSupportBundle = "FinishSupportBundle"
	EnqueueKubeLogsJob  = "EnqueueKubeLogsJob"

	// Runner updates.
	EnqueueRunnerSyncJob   = "EnqueueRunnerSyncJob"
	EnqueueRunnerUpdateJob = "EnqueueRunnerUpdateJob"
	EnqueueRunnerHealthJob = "EnqueueRunnerHealthJob"
	FinishRunnerUpdate     = "FinishRunnerUpdate"

	// ReconcileActionSchedules makes an install's action schedules (one
	// per action with a cron trigger) those of a config version; version 0
	// deletes them all.
	ReconcileActionSchedules = "ReconcileActionSchedules"
)
