package appconfig

import (
	"fmt"
)

// RunbooksDir holds one <name>.toml file per runbook.
const RunbooksDir = "runbooks"

// Kinds of a runbook's step.
const (
	StepAction      = "action"      // runs an action (Action), with inputs
	StepDeploy      = "deploy"      // deploys a component (Component)
	StepReprovision = "reprovision" // reprovisions the install
	StepApproval    = "approval"    // waits until someone approves the run
)

// RunbookStepKinds are the kinds a step may have.
var RunbookStepKinds = []string{StepAction, StepDeploy, StepReprovision, StepApproval}

// Runbook is one runbooks/<name>.toml: an ordered list of steps, run one
// after the other, with typed inputs its action steps are given.
type Runbook struct {
	Name        string        `json:"name"`
	File        string        `json:"file"` // "runbooks/release.toml"
	Description string        `json:"description,omitempty"`
	Inputs      []Input       `json:"inputs"`
	Steps       []RunbookStep `json:"steps"`
}

// RunbookStep is one [[steps]] entry.
type RunbookStep struct {
	Name string `json:"name"`
	// Kind is one of RunbookStepKinds.
	Kind string `json:"kind"`
	// Action names the action of an action step; Component the component
	// of a deploy step.
	Action    string `json:"action,omitempty"`
	Component string `json:"component,omitempty"`
	// Inputs are values an action step gives its action's inputs (as
	// ParseInput reads them); the action's other inputs take the runbook
	// run's input of the same name, if any, else their default.
	Inputs map[string]string `json:"inputs,omitempty"`
	// Description says what a step (an approval gate) is for.
	Description string `json:"description,omitempty"`
}

// Runbook returns a runbook by name.
func (c *Config) Runbook(name string) (*Runbook, bool) {
	return byName(c.Runbooks, name)
}

// RunbookNames lists the runbooks' names, sorted.
func (c *Config) RunbookNames() []string {
	return namesOf(c.Runbooks)
}

// CheckRunInputs checks the inputs a run is given against the runbook's, as
// Action.CheckRunInputs does (Problems keyed "inputs.<name>").
func (r *Runbook) CheckRunInputs(in map[string]string) (map[string]any, error) {
	return checkRunInputs(fmt.Sprintf("runbook %q", r.Name), r.Inputs, in)
}

// ActionInputs are the inputs an action step gives its action: the step's
// own values, then the run's inputs of the same names as the action's.
func (s RunbookStep) ActionInputs(act *Action, run map[string]string) map[string]string {
	out := map[string]string{}
	for _, in := range act.Inputs {
		if v, ok := s.Inputs[in.Name]; ok {
			out[in.Name] = v
		} else if v, ok := run[in.Name]; ok {
			out[in.Name] = v
		}
	}
	return out
}
