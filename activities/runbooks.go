package activities

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// RunbookGateWait is how long a runbook's approval gate waits before its
// step fails.
const RunbookGateWait = 7 * 24 * time.Hour

// runbookStore is what the runbook run activities read and write of the
// store.
type runbookStore interface {
	GetInstallByID(ctx context.Context, id string) (store.Install, error)
	GetRunbookRunByID(ctx context.Context, id string) (store.RunbookRun, error)
	ListRunbookRunSteps(ctx context.Context, runID string) ([]store.RunbookRunStep, error)
	StartRunbookStep(ctx context.Context, runID string, index int, start store.RunbookStepStart) error
	FinishRunbookStep(ctx context.Context, runID string, index int, st status.Job, why string) error
	FinishRunbookRun(ctx context.Context, runID string, st status.Job, why string) error
	CreateActionRun(ctx context.Context, r store.ActionRun, steps []string) (store.ActionRun, error)
	GetActionRunByID(ctx context.Context, id string) (store.ActionRun, error)
	StartOperation(ctx context.Context, op store.InstallOperation) (store.InstallOperation, error)
	FinishOperation(ctx context.Context, opID string, opStatus status.Op, errMsg string, installStatus status.Install) error
	GetOperationByID(ctx context.Context, opID string) (store.InstallOperation, error)
}

// Runbooks are the activities of a runbook run: its steps (each an action
// run, an operation or an approval gate) and its end.
type Runbooks struct {
	store  runbookStore
	render *renderer
}

// runbookRun is a run with its steps, its install and its config version's
// runbook.
type runbookRun struct {
	run     store.RunbookRun
	steps   []store.RunbookRunStep
	inst    store.Install
	cfg     *appconfig.Config
	runbook *appconfig.Runbook
}

func (a *Runbooks) load(ctx context.Context, runID string) (runbookRun, error) {
	run, err := a.store.GetRunbookRunByID(ctx, runID)
	if err != nil {
		return runbookRun{}, err
	}
	steps, err := a.store.ListRunbookRunSteps(ctx, runID)
	if err != nil {
		return runbookRun{}, err
	}
	inst, cfg, _, err := a.render.installAt(ctx, run.InstallID, run.ConfigVersion)
	if err != nil {
		return runbookRun{}, err
	}
	rb, ok := cfg.Runbook(run.Runbook)
	if !ok || len(rb.Steps) != len(steps) {
		return runbookRun{}, invalidConfig(fmt.Errorf("config version %d has no runbook %q of %d steps", run.ConfigVersion, run.Runbook, len(steps)))
	}
	return runbookRun{run: run, steps: steps, inst: inst, cfg: cfg, runbook: rb}, nil
}

// LoadRunbookRun gives the workflow a run's steps, and which have already
// succeeded.
func (a *Runbooks) LoadRunbookRun(ctx context.Context, runID string) (contract.RunbookRunPlan, error) {
	rr, err := a.load(ctx, runID)
	if err != nil {
		return contract.RunbookRunPlan{}, err
	}
	plan := contract.RunbookRunPlan{RunID: runID, InstallID: rr.inst.ID, GateWaitMS: RunbookGateWait.Milliseconds()}
	for _, s := range rr.steps {
		plan.Steps = append(plan.Steps, contract.RunbookStepPlan{Index: s.StepIndex, Name: s.Name, Kind: s.Kind,
			Done: s.Status == status.JobSucceeded})
	}
	return plan, nil
}

// FinishRunbookStep records how step index ended and returns it: an action
// step as its action run ended, a deploy or reprovision as its operation
// did, a gate succeeded once approved. why, when set, is why the step
// failed whatever else says (its workflow did not start, its gate timed
// out); a step whose run was cancelled ends cancelled, unless its child had
// already succeeded.
func (a *Runbooks) FinishRunbookStep(ctx context.Context, runID string, index int, why string) (contract.RunbookStepEnd, error) {
	rr, err := a.load(ctx, runID)
	if err != nil {
		return contract.RunbookStepEnd{}, err
	}
	if index < 0 || index >= len(rr.steps) {
		return contract.RunbookStepEnd{}, invalidConfig(fmt.Errorf("runbook run %s has no step %d", runID, index))
	}
	st, err := a.stepOutcome(ctx, rr.steps[index], why)
	if err != nil {
		return contract.RunbookStepEnd{}, err
	}
	switch {
	case st.Status == string(status.JobSucceeded):
		st.Error = ""
	case why == contract.RunbookStepCancelled:
		st.Status = string(status.JobCancelled)
	}
	return st, a.store.FinishRunbookStep(ctx, runID, index, status.Job(st.Status), st.Error)
}

// stepOutcome reads how a step's action run or operation ended.
func (a *Runbooks) stepOutcome(ctx context.Context, step store.RunbookRunStep, why string) (contract.RunbookStepEnd, error) {
	failed := contract.RunbookStepEnd{Status: string(status.JobFailed), Error: why}
	switch {
	case step.ActionRunID != "":
		run, err := a.store.GetActionRunByID(ctx, step.ActionRunID)
		if err != nil {
			return failed, err
		}
		if why == "" && run.Status != status.JobSucceeded {
			failed.Error = fmt.Sprintf("action run %s %s: %s", run.ID, run.Status, run.Error)
		}
		if why == "" && run.Status == status.JobSucceeded {
			return contract.RunbookStepEnd{Status: string(status.JobSucceeded)}, nil
		}
	case step.OperationID != "":
		if strings.HasPrefix(why, contract.RunbookChildNotStarted) { // else its workflow records its end
			if err := a.store.FinishOperation(ctx, step.OperationID, status.OpFailed, why, ""); err != nil {
				return failed, err
			}
		}
		op, err := a.store.GetOperationByID(ctx, step.OperationID)
		if err != nil {
			return failed, err
		}
		if op.Status == status.OpSucceeded {
			return contract.RunbookStepEnd{Status: string(status.JobSucceeded)}, nil
		}
		if why == "" {
			failed.Error = fmt.Sprintf("operation %s %s: %s", op.ID, op.Status, op.Error)
		}
	case step.Kind == appconfig.StepApproval && why == "" && step.ApprovedBy != "":
		return contract.RunbookStepEnd{Status: string(status.JobSucceeded)}, nil
	}
	if failed.Error == "" {
		failed.Error = "the step did not start"
	}
	return failed, nil
}

// RunbookGateApproved reads whether the gate of step index is recorded
// approved (the API records it before it signals).
func (a *Runbooks) RunbookGateApproved(ctx context.Context, runID string, index int) (bool, error) {
	steps, err := a.store.ListRunbookRunSteps(ctx, runID)
	if err != nil {
		return false, err
	}
	return index >= 0 && index < len(steps) && steps[index].ApprovedBy != "", nil
}

// FinishRunbookRun records how a run ended; steps it did not reach are
// skipped.
func (a *Runbooks) FinishRunbookRun(ctx context.Context, runID string, st status.Job, why string) error {
	return a.store.FinishRunbookRun(ctx, runID, st, why)
}
