package status

// An install's statuses.
const (
	InstallCreated          = "created"
	InstallWaitingForRunner = "waiting_for_runner"
	InstallProvisioning     = "provisioning"
	InstallActive           = "active"
	InstallFailed           = "failed"
	InstallDeprovisioning   = "deprovisioning"
	InstallDeprovisioned    = "deprovisioned"
)

// An install operation's statuses.
const (
	OpRunning          = "running"
	OpWaitingForRunner = "waiting_for_runner"
	OpSucceeded        = "succeeded"
	OpFailed           = "failed"
	OpCancelled        = "cancelled"
	OpDenied           = "denied"
)

// The statuses of one step of an operation.
const (
	StepPending         = "pending"
	StepBuilding        = "building" // waiting for the component's build
	StepSyncing         = "syncing"  // copying the build into the install's registry
	StepPlanning        = "planning"
	StepWaitingApproval = "waiting_approval"
	StepApplying        = "applying"
	StepSucceeded       = "succeeded"
	StepNoChanges       = "no_changes"
	StepPlanned         = "planned" // plan-only operations stop here
	StepFailed          = "failed"
	StepSkipped         = "skipped" // a dependency failed or was denied
	StepDenied          = "denied"
	StepCancelled       = "cancelled"
)

// StepOK says the steps after this one may go on (in a plan-only operation,
// after a plan).
func StepOK(s string) bool { return s == StepSucceeded || s == StepNoChanges || s == StepPlanned }

// A job's statuses: queued → running → succeeded | failed | cancelled,
// or running → lost (lease expired) → queued again by the workflow's retry.
type Job string

const (
	JobQueued    = "queued"
	JobRunning   = "running"
	JobSucceeded = "succeeded"
	JobFailed    = "failed"
	JobCancelled = "cancelled"
	JobLost      = "lost"
)

// JobTerminal says no more attempt will change the job unless a workflow
// retries it (lost is terminal for the attempt, not the job).
func JobTerminal(s string) bool {
	switch s {
	case JobSucceeded, JobFailed, JobCancelled, JobLost:
		return true
	}
	return false
}

// A build's statuses.
const (
	BuildQueued    = "queued"
	BuildRunning   = "running"
	BuildSucceeded = "succeeded"
	BuildFailed    = "failed"
)

// BuildTerminal says the build has ended.
func BuildTerminal(s string) bool { return s == BuildSucceeded || s == BuildFailed }

// An install's approval modes.
const (
	ApproveAll = "approve-all"
	Prompt     = "prompt"
)

// SandboxStep is the step name of the install's sandbox.
const SandboxStep = "sandbox"
