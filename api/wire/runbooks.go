package wire

import "time"

// ConfigRunbook is a runbook a config defines: steps run one after the
// other.
type ConfigRunbook struct {
	Name        string `json:"name" required:"true"`
	File        string `json:"file" required:"true"`
	Description string `json:"description,omitempty"`
	// the typed inputs a run is given
	Inputs []ConfigInput       `json:"inputs" required:"true"`
	Steps  []ConfigRunbookStep `json:"steps" required:"true"`
}

// ConfigRunbookStep is one step of a runbook.
type ConfigRunbookStep struct {
	Name string `json:"name" required:"true"`
	Kind string `json:"kind" required:"true" enum:"action,deploy,reprovision,approval"`
	// the action an action step runs
	Action string `json:"action,omitempty"`
	// the component a deploy step deploys
	Component string `json:"component,omitempty"`
	// the values an action step gives its action's inputs
	Inputs      map[string]string `json:"inputs,omitempty"`
	Description string            `json:"description,omitempty"`
}

// RunbookList is the runbooks of an install's current config version.
type RunbookList struct {
	ConfigVersion int             `json:"config_version" required:"true"`
	Runbooks      []ConfigRunbook `json:"runbooks" required:"true"`
}

// RunRunbookRequest starts a run of a runbook.
type RunRunbookRequest struct {
	// the runbook's inputs by name, each as text (`--input k=v`): "3", "true", a JSON list or map
	Inputs map[string]string `json:"inputs"`
	_      struct{}          `additionalProperties:"false"`
}

// RunbookRun is one run of an install's runbook.
type RunbookRun struct {
	ID            string `json:"id" required:"true"`
	InstallID     string `json:"install_id" required:"true"`
	Runbook       string `json:"runbook" required:"true"`
	ConfigVersion int    `json:"config_version" required:"true"`
	// the run's inputs; sensitive ones shown as "(sensitive)"
	Inputs     map[string]string `json:"inputs" required:"true"`
	WorkflowID string            `json:"workflow_id" required:"true"`
	// failed and cancelled runs may be resumed
	Status     string     `json:"status" required:"true" enum:"queued,running,waiting_approval,succeeded,failed,cancelled"`
	StartedBy  string     `json:"started_by,omitempty"`
	Error      string     `json:"error,omitempty"`
	CreatedAt  time.Time  `json:"created_at" required:"true"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	// the steps, in order (left out of lists)
	Steps []RunbookRunStep `json:"steps,omitempty"`
}

// RunbookRunStep is one step of a runbook run.
type RunbookRunStep struct {
	Index  int    `json:"index" required:"true"`
	Name   string `json:"name" required:"true"`
	Kind   string `json:"kind" required:"true" enum:"action,deploy,reprovision,approval"`
	Status string `json:"status" required:"true" enum:"pending,running,waiting_approval,succeeded,failed,cancelled,skipped"`
	// the action an action step runs, or the component a deploy step deploys
	Target string `json:"target,omitempty"`
	// an action step's action run: follow its steps' logs there
	ActionRunID string `json:"action_run_id,omitempty"`
	// a deploy or reprovision step's operation: follow its steps' logs there
	OperationID string `json:"operation_id,omitempty"`
	// who approved an approval gate
	ApprovedBy string     `json:"approved_by,omitempty"`
	Error      string     `json:"error,omitempty"`
	StartedAt  *time.Time `json:"started_at,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

// RunbookRunList is the runs of an install's runbook, newest first.
type RunbookRunList struct {
	Runs []RunbookRun `json:"runs" required:"true"`
}
