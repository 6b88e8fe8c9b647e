package contract

// WorkflowRunbookRun runs one run of an install's runbook, step by step.
const WorkflowRunbookRun = "RunbookRun"

// RunbookApproveSignal tells a runbook run that the gate it waits at was
// approved (the store says by whom).
const RunbookApproveSignal = "runbook-approve"

// RunbookRunInput names the run; its inputs stay in the store (they may be
// secret). A resumed run starts the workflow again with the same input.
type RunbookRunInput struct {
	RunID string
}

// RunbookRunResult is how a run ended.
type RunbookRunResult struct {
	RunID  string
	Status string
	Error  string `json:",omitempty"`
}

// RunbookRunPlan is what the workflow needs of a recorded run: its steps,
// and which of them have already succeeded (a resumed run skips those).
type RunbookRunPlan struct {
	RunID     string
	InstallID string
	Steps     []RunbookStepPlan
	// GateWaitMS bounds how long an approval gate waits.
	GateWaitMS int64
}

// RunbookStepPlan is one step of a run.
type RunbookStepPlan struct {
	Index int
	Name  string
	Kind  string // appconfig's step kind
	Done  bool   // succeeded already
}

// RunbookStepStart is how a step started: the child workflow to run (an
// action run's or an operation's) with its run or operation, none for an
// approval gate, or why it could not start (Failed: e.g. the install is
// locked by another operation).
type RunbookStepStart struct {
	Workflow    string `json:",omitempty"`
	WorkflowID  string `json:",omitempty"`
	ActionRunID string `json:",omitempty"`
	Action      string `json:",omitempty"`
	InstallID   string `json:",omitempty"`
	OperationID string `json:",omitempty"`
	Failed      string `json:",omitempty"`
}

// RunbookStepEnd is how a step ended, as recorded.
type RunbookStepEnd struct {
	Status string
	Error  string `json:",omitempty"`
}

// RunbookChildNotStarted begins why a step failed when its child workflow
// could not start (its operation, recorded, never ran: FinishRunbookStep
// records it failed too).
const RunbookChildNotStarted = "the step's workflow could not be started: "

// RunbookApproval is the payload of RunbookApproveSignal: the gate's step.
type RunbookApproval struct {
	Step int
}

// RunbookRunWorkflowID is the ID of a runbook run's workflow, e.g.
// "install/ins_123/runbook/release/rbr_456".
func RunbookRunWorkflowID(installID, runbook, runID string) string {
	return installPrefix(installID) + "runbook/" + runbook + "/" + runID
}

// RunbookStepCancelled is why a step ended when its run was cancelled: the
// step is recorded cancelled (its action run or operation was asked to
// cancel, its gate stopped waiting).
const RunbookStepCancelled = "cancelled"
