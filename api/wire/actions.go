package wire

import "time"

// ActionList is the actions of an install's current config version.
type ActionList struct {
	ConfigVersion int            `json:"config_version" required:"true"`
	Actions       []ConfigAction `json:"actions" required:"true"`
}

// RunActionRequest starts a manual run of an action.
type RunActionRequest struct {
	// the action's inputs by name, each as text (`--input k=v`): "3", "true", a JSON list or map
	Inputs map[string]string `json:"inputs"`
	_      struct{}          `additionalProperties:"false"`
}

// ActionRun is one run of an install's action.
type ActionRun struct {
	ID            string `json:"id" required:"true"`
	InstallID     string `json:"install_id" required:"true"`
	Action        string `json:"action" required:"true"`
	ConfigVersion int    `json:"config_version" required:"true"`
	// manual, cron, a lifecycle hook's (before or after), or a runbook's
	Trigger string `json:"trigger" required:"true" enum:"manual,cron,before,after,runbook"`
	// a hook's run: the operation and its step that ran it
	OperationID   string `json:"operation_id,omitempty"`
	OperationStep string `json:"operation_step,omitempty"`
	// the run's inputs; sensitive ones shown as "(sensitive)"
	Inputs     map[string]string `json:"inputs" required:"true"`
	WorkflowID string            `json:"workflow_id" required:"true"`
	Status     string            `json:"status" required:"true" enum:"queued,running,succeeded,failed,cancelled"`
	// the run holds (or held) the install's lock: no operation runs beside it
	Exclusive bool `json:"exclusive,omitempty"`
	// who started it ("" for a schedule)
	StartedBy  string     `json:"started_by,omitempty"`
	Error      string     `json:"error,omitempty"`
	CreatedAt  time.Time  `json:"created_at" required:"true"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	// the steps, in order (left out of lists)
	Steps []ActionRunStep `json:"steps,omitempty"`
}

// ActionRunStep is one step of a run: one job, whose log the job-logs route
// follows.
type ActionRunStep struct {
	Index    int     `json:"index" required:"true"`
	Name     string  `json:"name" required:"true"`
	Status   string  `json:"status" required:"true" enum:"pending,queued,running,succeeded,failed,cancelled,skipped"`
	JobID    *string `json:"job_id,omitempty"`
	ExitCode *int    `json:"exit_code,omitempty"`
	// the outputs the step wrote; sensitive ones shown as "(sensitive)"
	Outputs    map[string]string `json:"outputs" required:"true"`
	Error      string            `json:"error,omitempty"`
	StartedAt  *time.Time        `json:"started_at,omitempty"`
	FinishedAt *time.Time        `json:"finished_at,omitempty"`
}

// ActionRunList is the runs of an install's action, newest first.
type ActionRunList struct {
	Runs []ActionRun `json:"runs" required:"true"`
}
