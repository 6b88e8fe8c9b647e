package contract

// WorkflowActionRun runs one run of an install's action, step by step.
const WorkflowActionRun = "ActionRun"

// ActionRunInput names the run; its inputs stay in the store (they may be
// secret). A run a cron schedule starts has no RunID: the workflow records
// the run itself, for InstallID and Action.
type ActionRunInput struct {
	RunID     string `json:",omitempty"`
	InstallID string `json:",omitempty"`
	Action    string `json:",omitempty"`
}

// ActionRunResult is how each step of a run ended (no outputs: they may be
// secret).
type ActionRunResult struct {
	RunID  string
	Status string
	Steps  map[string]string
	Error  string `json:",omitempty"`
}

// ActionRunWorkflowID is the ID of an action run's workflow, e.g.
// "install/ins_123/action/migrate/run_456".
func ActionRunWorkflowID(installID, action, runID string) string {
	return installPrefix(installID) + "action/" + action + "/" + runID
}

// ActionScheduleID is the ID of the Temporal schedule of an install's cron
// action (one per action with a cron trigger).
func ActionScheduleID(installID, action string) string {
	return installPrefix(installID) + "action/" + action + "/schedule"
}
