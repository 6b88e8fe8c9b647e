package contract

import "strconv"

// ActionRunPlan is what the ActionRun workflow needs of a recorded run: its
// steps' names in order and how long each may run. The rest (inputs, env,
// scripts) the activities read from the store.
type ActionRunPlan struct {
	RunID         string
	InstallID     string
	Action        string
	Steps         []string
	StepTimeoutMS int64
	// Ended is the run's status when it ended before its workflow ran a
	// step (a scheduled exclusive run refused: the install was locked);
	// the workflow then runs nothing and records nothing.
	Ended string `json:",omitempty"`
}

// ActionStepJobKey is the key of a run's step's job (its workflow's ID and
// the step), which the store reads a job's origin from.
func ActionStepJobKey(workflowID string, index int) string {
	return workflowID + "/step/" + strconv.Itoa(index)
}
