package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// actionStore is what the action run activities read and write of the store.
type actionStore interface {
	GetInstallByID(ctx context.Context, id string) (store.Install, error)
	CreateActionRun(ctx context.Context, r store.ActionRun, steps []string) (store.ActionRun, error)
	FindActionRunByWorkflow(ctx context.Context, workflowID string) (store.ActionRun, bool, error)
	FindHookRun(ctx context.Context, opID, step string) (store.ActionRun, bool, error)
	GetOperationByID(ctx context.Context, opID string) (store.InstallOperation, error)
	GetInstallRunner(ctx context.Context, orgID, installID string) (store.Runner, error)
	GetActionRunByID(ctx context.Context, id string) (store.ActionRun, error)
	ListActionRunSteps(ctx context.Context, runID string) ([]store.ActionRunStep, error)
	StartActionRunStep(ctx context.Context, runID string, index int, jobID string) error
	FinishActionRunStep(ctx context.Context, step store.ActionRunStep) error
	FinishActionRun(ctx context.Context, runID string, st status.Job, why string) error
	GetJobOutcome(ctx context.Context, jobID string) (store.Job, error)
	LastLogLine(ctx context.Context, jobID string, max int) (string, error)
	RecordCheckHealth(ctx context.Context, orgID, installID, source string, results []store.CheckResult) error
}

// Actions are the activities of an action run: its record, each step's job
// and outcome, and its end.
type Actions struct {
	store  actionStore
	render *renderer
	queue  *jobQueue
}

// actionRun is a run with its install and the action of its config version.
type actionRun struct {
	run    store.ActionRun
	inst   store.Install
	cfg    *appconfig.Config
	action *appconfig.Action
}

func (a *Actions) load(ctx context.Context, runID string) (actionRun, error) {
	run, err := a.store.GetActionRunByID(ctx, runID)
	if err != nil {
		return actionRun{}, err
	}
	inst, cfg, _, err := a.render.installAt(ctx, run.InstallID, run.ConfigVersion)
	if err != nil {
		return actionRun{}, err
	}
	act, ok := cfg.Action(run.Action)
	if !ok {
		return actionRun{}, invalidConfig(fmt.Errorf("config version %d has no action %q", run.ConfigVersion, run.Action))
	}
	return actionRun{run: run, inst: inst, cfg: cfg, action: act}, nil
}

// RecordActionRun records a run a schedule started, of the install's
// current config version with the action's default inputs. A retry finds
// the run its first try recorded.
func (a *Actions) RecordActionRun(ctx context.Context, installID, action, workflowID string) (string, error) {
	found, ok, err := a.store.FindActionRunByWorkflow(ctx, workflowID)
	if err != nil || (ok && store.ActionRunDone(found)) {
		return found.ID, err
	}
	inst, err := a.store.GetInstallByID(ctx, installID)
	if err != nil {
		return "", err
	}
	version := inst.ConfigVersion
	if ok {
		version = found.ConfigVersion
	}
	cfg, version, err := a.render.installConfig(ctx, inst.OrgID, inst.AppID, version)
	if err != nil {
		return "", err
	}
	act, exists := cfg.Action(action)
	if !exists {
		return "", invalidConfig(fmt.Errorf("config version %d has no action %q", version, action))
	}
	if ok {
		if act.Exclusive && !found.Exclusive { // refused, and the try that recorded it failed to end it
			return found.ID, a.store.FinishActionRun(ctx, found.ID, status.JobFailed, refusedBusy)
		}
		return found.ID, nil
	}
	rec := store.ActionRun{OrgID: inst.OrgID, InstallID: inst.ID, Action: action, ConfigVersion: version,
		Trigger: appconfig.TriggerCron, WorkflowID: workflowID, Exclusive: act.Exclusive}
	run, err := a.store.CreateActionRun(ctx, rec, stepNames(act))
	if errors.Is(err, store.ErrConflict) {
		return a.refuseRun(ctx, rec, stepNames(act), err)
	}
	return run.ID, err
}

// refusedBusy ends a refused run whose first reason was lost with its try.
const refusedBusy = "not started: the install was held by an operation or an exclusive run"

// refuseRun records a scheduled exclusive run that could not take the
// install's lock (err says what holds it) as failed before it ran: as an
// operation started then would be refused. Its workflow sees it ended
// (LoadActionRun) and runs nothing; no health result is recorded.
func (a *Actions) refuseRun(ctx context.Context, rec store.ActionRun, steps []string, err error) (string, error) {
	rec.Exclusive = false // it never held the lock
	run, cerr := a.store.CreateActionRun(ctx, rec, steps)
	if cerr != nil {
		return "", cerr
	}
	why := fmt.Sprintf("not started: %v", errors.Unwrap(err))
	return run.ID, a.store.FinishActionRun(ctx, run.ID, status.JobFailed, why)
}

// stepNames lists an action's steps' names in order.
func stepNames(act *appconfig.Action) []string {
	out := make([]string, len(act.Steps))
	for i, s := range act.Steps {
		out[i] = s.Name
	}
	return out
}

// LoadActionRun gives the workflow a run's steps and their timeout.
func (a *Actions) LoadActionRun(ctx context.Context, runID string) (contract.ActionRunPlan, error) {
	ar, err := a.load(ctx, runID)
	if err != nil {
		return contract.ActionRunPlan{}, err
	}
	plan := contract.ActionRunPlan{RunID: runID, InstallID: ar.inst.ID, Action: ar.run.Action, Steps: stepNames(ar.action),
		StepTimeoutMS: int64(ar.action.TimeoutSeconds) * 1000}
	if store.ActionRunDone(ar.run) {
		plan.Ended = string(ar.run.Status)
	}
	return plan, nil
}

// EnqueueActionStepJob renders step index of a run (its env with the run's
// inputs, and the outputs of the steps before it) and queues it on the
// install's runner; idempotent by key. The manifest stays in the store.
func (a *Actions) EnqueueActionStepJob(ctx context.Context, runID string, index int, key string) (contract.JobRef, error) {
	ar, err := a.load(ctx, runID)
	if err != nil {
		return contract.JobRef{}, err
	}
	if index < 0 || index >= len(ar.action.Steps) {
		return contract.JobRef{}, invalidConfig(fmt.Errorf("action %q has no step %d", ar.run.Action, index))
	}
	m, err := a.stepManifest(ctx, ar, index)
	if err != nil {
		return contract.JobRef{}, err
	}
	timeout := time.Duration(ar.action.TimeoutSeconds) * time.Second
	ref, err := a.queue.enqueueManifest(ctx, key, ar.inst.ID, protocol.JobTypeAction, m, timeout)
	if err != nil {
		return contract.JobRef{}, err
	}
	return ref, a.store.StartActionRunStep(ctx, runID, index, ref.JobID)
}

// FinishActionStep records how a step ended, with the outputs it reported
// (read from its job, never passed through the workflow), and returns its
// status: a step whose outputs could not be read, or that exited non-zero,
// failed.
func (a *Actions) FinishActionStep(ctx context.Context, runID string, index int, res contract.JobResult) (status.Job, error) {
	ar, err := a.load(ctx, runID)
	if err != nil {
		return "", err
	}
	step := store.ActionRunStep{RunID: runID, StepIndex: index, Status: res.Status, ExitCode: res.ExitCode, Error: res.Error,
		Outputs: map[string]string{}, SensitiveOutputs: map[string]string{}}
	if res.JobID != "" {
		if err := a.readStepOutputs(ctx, ar.action, res.JobID, &step); err != nil {
			return "", err
		}
	}
	if step.Status == status.JobSucceeded && step.ExitCode != nil && *step.ExitCode != 0 {
		step.Status = status.JobFailed
	}
	if step.Status == status.JobFailed && step.Error == "" && step.ExitCode != nil {
		step.Error = fmt.Sprintf("exit code %d", *step.ExitCode)
	}
	return step.Status, a.store.FinishActionRunStep(ctx, step)
}

// readStepOutputs reads the outputs a step's job reported into step, the
// action's sensitive ones apart.
func (a *Actions) readStepOutputs(ctx context.Context, act *appconfig.Action, jobID string, step *store.ActionRunStep) error {
	j, err := a.store.GetJobOutcome(ctx, jobID)
	if err != nil {
		return err
	}
	if step.ExitCode == nil {
		step.ExitCode = j.ExitCode
	}
	if j.Outputs == "" {
		return nil
	}
	var out protocol.ActionOutputs
	if err := json.Unmarshal([]byte(j.Outputs), &out); err != nil {
		step.Status, step.Error = status.JobFailed, "the step's outputs are not readable: "+err.Error()
		return nil
	}
	step.ExitCode = &out.ExitCode
	if out.OutputsError != "" {
		step.Status, step.Error = status.JobFailed, "outputs: "+out.OutputsError
	}
	for k, v := range out.Outputs {
		if isSensitiveOutput(act, k) {
			step.SensitiveOutputs[k] = v
		} else {
			step.Outputs[k] = v
		}
	}
	return nil
}

func isSensitiveOutput(act *appconfig.Action, name string) bool {
	for _, s := range act.SensitiveOutputs {
		if s == name {
			return true
		}
	}
	return false
}

// FinishActionRun records, for a health-check action, the run's result as
// health, and then how the run ended (steps it did not reach are skipped,
// the install's lock an exclusive run held is released), also when the
// health could not be recorded (the activity is then retried): whoever sees
// the run ended sees its health too.
func (a *Actions) FinishActionRun(ctx context.Context, runID string, st status.Job, why string) error {
	healthErr := a.recordHealth(ctx, runID, st) // its failure must not keep the run, or the install, held
	if err := a.store.FinishActionRun(ctx, runID, st, why); err != nil {
		return err
	}
	return healthErr
}
