package activities

import (
	"context"
	"errors"
	"fmt"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// BeginRunbookStep starts step index of a run: an action step records its
// action run (with the step's inputs and the run's), a deploy or reprovision
// step starts its operation (taking the install's lock: a locked install
// fails the step, saying which operation holds it), a gate waits for
// approval. It returns the child workflow the run then runs. A retry after
// the step started returns what it started.
func (a *Runbooks) BeginRunbookStep(ctx context.Context, runID string, index int) (contract.RunbookStepStart, error) {
	rr, err := a.load(ctx, runID)
	if err != nil {
		return contract.RunbookStepStart{}, err
	}
	if index < 0 || index >= len(rr.steps) {
		return contract.RunbookStepStart{}, invalidConfig(fmt.Errorf("runbook run %s has no step %d", runID, index))
	}
	step, spec := rr.steps[index], rr.runbook.Steps[index]
	if step.Status == status.JobRunning || step.Status == store.RunbookWaitingApproval {
		return a.started(ctx, rr, step, spec)
	}
	switch spec.Kind {
	case appconfig.StepAction:
		return a.beginAction(ctx, rr, index, spec)
	case appconfig.StepDeploy, appconfig.StepReprovision:
		return a.beginOperation(ctx, rr, index, spec)
	}
	return contract.RunbookStepStart{}, a.store.StartRunbookStep(ctx, runID, index, store.RunbookStepStart{Status: store.RunbookWaitingApproval})
}

// started is what a step that has started runs.
func (a *Runbooks) started(ctx context.Context, rr runbookRun, step store.RunbookRunStep, spec appconfig.RunbookStep) (contract.RunbookStepStart, error) {
	switch {
	case step.ActionRunID != "":
		return actionStart(rr.inst.ID, spec.Action, step.ActionRunID), nil
	case step.OperationID != "":
		op, err := a.store.GetOperationByID(ctx, step.OperationID)
		if err != nil {
			return contract.RunbookStepStart{}, err
		}
		return contract.RunbookStepStart{Workflow: contract.OperationWorkflows[op.Kind], WorkflowID: op.WorkflowID, OperationID: op.ID}, nil
	}
	return contract.RunbookStepStart{}, nil
}

func actionStart(installID, action, runID string) contract.RunbookStepStart {
	return contract.RunbookStepStart{Workflow: contract.WorkflowActionRun, WorkflowID: contract.ActionRunWorkflowID(installID, action, runID),
		ActionRunID: runID, Action: action, InstallID: installID}
}

// beginAction records the action run of an action step: its inputs are the
// step's and the run's (ActionInputs), the sensitive ones sealed.
func (a *Runbooks) beginAction(ctx context.Context, rr runbookRun, index int, spec appconfig.RunbookStep) (contract.RunbookStepStart, error) {
	act, ok := rr.cfg.Action(spec.Action)
	if !ok {
		return contract.RunbookStepStart{}, invalidConfig(fmt.Errorf("config version %d has no action %q", rr.run.ConfigVersion, spec.Action))
	}
	all := map[string]string{}
	for k, v := range rr.run.Inputs {
		all[k] = v
	}
	for k, v := range rr.run.SensitiveInputs {
		all[k] = v
	}
	given := spec.ActionInputs(act, all)
	if _, err := act.CheckRunInputs(given); err != nil {
		return a.failStep(ctx, rr.run.ID, index, fmt.Sprintf("the inputs of action %q: %v", act.Name, err))
	}
	plain, sensitive := map[string]string{}, map[string]string{}
	for k, v := range given {
		if in := act.Inputs[indexOfInput(act.Inputs, k)]; in.Sensitive {
			sensitive[k] = v
		} else {
			plain[k] = v
		}
	}
	id := store.NewID("act")
	run, err := a.store.CreateActionRun(ctx, store.ActionRun{ID: id, OrgID: rr.run.OrgID, InstallID: rr.inst.ID, Action: act.Name,
		ConfigVersion: rr.run.ConfigVersion, Trigger: "runbook", Inputs: plain, SensitiveInputs: sensitive,
		WorkflowID: contract.ActionRunWorkflowID(rr.inst.ID, act.Name, id), StartedBy: rr.run.StartedBy,
		StartedByUser: rr.run.StartedByUser, Exclusive: act.Exclusive}, stepNames(act))
	if errors.Is(err, store.ErrConflict) {
		return a.failStep(ctx, rr.run.ID, index, fmt.Sprintf("action %s not started: %v", act.Name, errors.Unwrap(err)))
	}
	if err != nil {
		return contract.RunbookStepStart{}, err
	}
	start := store.RunbookStepStart{Status: status.JobRunning, ActionRunID: run.ID}
	return actionStart(rr.inst.ID, act.Name, run.ID), a.store.StartRunbookStep(ctx, rr.run.ID, index, start)
}

func indexOfInput(ins []appconfig.Input, name string) int {
	for i, in := range ins {
		if in.Name == name {
			return i
		}
	}
	return -1
}

// beginOperation starts a deploy step's deploy_component or a reprovision,
// of the run's config version, as the API starts one.
func (a *Runbooks) beginOperation(ctx context.Context, rr runbookRun, index int, spec appconfig.RunbookStep) (contract.RunbookStepStart, error) {
	kind := contract.OpReprovision
	if spec.Kind == appconfig.StepDeploy {
		kind = contract.OpDeployComponent
	}
	op, err := a.store.StartOperation(ctx, store.InstallOperation{OrgID: rr.inst.OrgID, InstallID: rr.inst.ID, Kind: kind,
		Component: spec.Component, ConfigVersion: rr.run.ConfigVersion, ApprovalMode: rr.inst.ApprovalMode,
		StartedBy: rr.run.StartedBy, StartedByUser: rr.run.StartedByUser,
		WorkflowID: contract.OperationWorkflowID(rr.inst.ID, kind, spec.Component)})
	if errors.Is(err, store.ErrConflict) {
		return a.failStep(ctx, rr.run.ID, index, fmt.Sprintf("%s not started: %v", kind, errors.Unwrap(err)))
	}
	if err != nil {
		return contract.RunbookStepStart{}, err
	}
	start := contract.RunbookStepStart{Workflow: contract.OperationWorkflows[kind], WorkflowID: op.WorkflowID, OperationID: op.ID}
	return start, a.store.StartRunbookStep(ctx, rr.run.ID, index, store.RunbookStepStart{Status: status.JobRunning, OperationID: op.ID})
}

// failStep records a step that could not start, and says why.
func (a *Runbooks) failStep(ctx context.Context, runID string, index int, why string) (contract.RunbookStepStart, error) {
	if err := a.store.StartRunbookStep(ctx, runID, index, store.RunbookStepStart{Status: status.JobRunning}); err != nil {
		return contract.RunbookStepStart{}, err
	}
	return contract.RunbookStepStart{Failed: why}, a.store.FinishRunbookStep(ctx, runID, index, status.JobFailed, why)
}
