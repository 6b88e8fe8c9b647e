package status

// Install is an install's status.
type Install string

// An install's statuses.
const (
	InstallCreated          Install = "created"
	InstallWaitingForRunner Install = "waiting_for_runner"
	InstallProvisioning     Install = "provisioning"
	InstallActive           Install = "active"
	InstallFailed           Install = "failed"
	InstallDeprovisioning   Install = "deprovisioning"
	InstallDeprovisioned    Install = "deprovisioned"
)

// Op is an install operation's status.
type Op string

// An install operation's statuses.
const (
	OpRunning          Op = "running"
	OpWaitingForRunner Op = "waiting_for_runner"
	OpSucceeded        Op = "succeeded"
	OpFailed           Op = "failed"
	OpCancelled        Op = "cancelled"
	OpDenied           Op = "denied"
	// OpWaitingForWindow: the operation waits for the install's next
	// maintenance window (its waiting_until) before it starts.
	OpWaitingForWindow Op = "waiting_for_maintenance_window"
)

// Step is the status of one step of an operation.
type Step string

// The statuses of one step of an operation.
const (
	StepPending         Step = "pending"
	StepBuilding        Step = "building" // waiting for the component's build
	StepSyncing         Step = "syncing"  // copying the build into the install's registry
	StepPlanning        Step = "planning"
	StepWaitingApproval Step = "waiting_approval"
	StepApplying        Step = "applying"
	StepSucceeded       Step = "succeeded"
	StepNoChanges       Step = "no_changes"
	StepPlanned         Step = "planned" // plan-only operations stop here
	StepFailed          Step = "failed"
	StepSkipped         Step = "skipped" // a dependency failed or was denied
	StepDenied          Step = "denied"
	StepCancelled       Step = "cancelled"
	// StepUnchanged: an update_inputs step whose rendered job is the one
	// last applied; nothing ran.
	StepUnchanged Step = "unchanged"
	// StepDrifted: a drift check's plan of the step is not empty.
	StepDrifted Step = "drifted"
	// StepLeftBehind: a deprovision with forget could not destroy the step;
	// what it left behind is recorded on it, and the install forgets it.
	StepLeftBehind Step = "left_behind"
)

// StepOK says the steps after this one may go on (in a plan-only operation,
// after a plan; in a deprovision with forget, after a step left behind).
func StepOK(s Step) bool {
	return s == StepSucceeded || s == StepNoChanges || s == StepPlanned || s == StepUnchanged || s == StepLeftBehind
}

// Job is a job's status: queued → running → succeeded | failed | cancelled,
// or running → lost (lease expired) → queued again by the workflow's retry.
type Job string

// A job's statuses.
const (
	JobQueued    Job = "queued"
	JobRunning   Job = "running"
	JobSucceeded Job = "succeeded"
	JobFailed    Job = "failed"
	JobCancelled Job = "cancelled"
	JobLost      Job = "lost"
)

// JobTerminal says no more attempt will change the job unless a workflow
// retries it (lost is terminal for the attempt, not the job).
func JobTerminal(s Job) bool {
	switch s {
	case JobSucceeded, JobFailed, JobCancelled, JobLost:
		return true
	}
	return false
}

// Build is a build's status.
type Build string

// A build's statuses.
const (
	BuildQueued    Build = "queued"
	BuildRunning   Build = "running"
	BuildSucceeded Build = "succeeded"
	BuildFailed    Build = "failed"
)

// BuildTerminal says the build has ended.
func BuildTerminal(s Build) bool { return s == BuildSucceeded || s == BuildFailed }

// Approval is an install's approval mode.
type Approval string

// An install's approval modes.
const (
	ApproveAll Approval = "approve-all"
	Prompt     Approval = "prompt"
)

// Decision is what the API recorded on a step's plan ("" undecided): a
// workflow applies a plan only when the store says it was approved.
type Decision string

// Decisions.
const (
	DecisionApproved Decision = "approved"
	DecisionDenied   Decision = "denied"
)

// SandboxStep is the step name of the install's sandbox.
const SandboxStep = "sandbox"

// Release is a release's status.
type Release string

// A release's statuses.
const (
	ReleaseRunning   Release = "running"
	ReleasePaused    Release = "paused"
	ReleaseHalted    Release = "halted"
	ReleaseSucceeded Release = "succeeded"
	ReleaseCancelled Release = "cancelled"
)

// ReleaseEnded says the release has finished (it runs no more).
func ReleaseEnded(s Release) bool { return s == ReleaseSucceeded || s == ReleaseCancelled }

// ReleaseInstall is the status of one install in a release.
type ReleaseInstall string

// The statuses of one install in a release.
const (
	ReleaseInstallPending   ReleaseInstall = "pending"
	ReleaseInstallWaiting   ReleaseInstall = "waiting" // for the install's maintenance window
	ReleaseInstallRunning   ReleaseInstall = "running"
	ReleaseInstallSucceeded ReleaseInstall = "succeeded"
	ReleaseInstallFailed    ReleaseInstall = "failed"
	ReleaseInstallSkipped   ReleaseInstall = "skipped" // the release was cancelled before it
	// ReleaseInstallUnhealthy: deployed, but not healthy through its batch's
	// soak (the error says why).
	ReleaseInstallUnhealthy ReleaseInstall = "unhealthy"
	// ReleaseInstallRolledBack: its batch failed the health gate and it was
	// deployed back to its from_version.
	ReleaseInstallRolledBack ReleaseInstall = "rolled_back"
)

// RunnerUpdate is the status of a runner update.
type RunnerUpdate string

// A runner update's statuses.
const (
	RunnerUpdateRunning   RunnerUpdate = "running"
	RunnerUpdateSucceeded RunnerUpdate = "succeeded"
	RunnerUpdateFailed    RunnerUpdate = "failed"
	// RunnerUpdateAvailable: the runner holds the verified release until
	// its customer accepts it (`outpost-runner update accept`); it then
	// switches and the update is succeeded.
	RunnerUpdateAvailable RunnerUpdate = "available"
)
