package activities

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"go.temporal.io/sdk/temporal"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// RecordHookRun records the action run of an operation's hook step (once:
// a retried call finds it), of the operation's config version, with the
// inputs its trigger gives (hookInputs) and the action's defaults for the
// others, its trigger the hook's (before or after), and
// gives the workflow its plan; the run's workflow is
// contract.ActionRunWorkflowID of it.
func (a *Actions) RecordHookRun(ctx context.Context, opID, step string) (contract.ActionRunPlan, error) {
	run, found, err := a.store.FindHookRun(ctx, opID, step)
	if err != nil {
		return contract.ActionRunPlan{}, err
	}
	if !found {
		if run, err = a.createHookRun(ctx, opID, step); err != nil {
			return contract.ActionRunPlan{}, err
		}
		if err := a.refuseByPolicy(ctx, run); err != nil {
			return contract.ActionRunPlan{}, err
		}
	}
	if run.Status == status.JobFailed && store.ActionRunDone(run) { // refused by the runner's policy
		return contract.ActionRunPlan{}, temporal.NewNonRetryableApplicationError(run.Error, "ActionRefused", nil)
	}
	return a.LoadActionRun(ctx, run.ID)
}

// refuseByPolicy ends a hook's run failed, before any job, when the
// install's runner, by its customer's policy as it last reported it, does
// not run the action (a runner that reported none checks each job itself).
func (a *Actions) refuseByPolicy(ctx context.Context, run store.ActionRun) error {
	r, err := a.store.GetInstallRunner(ctx, run.OrgID, run.InstallID)
	if err != nil || r.CustomerPolicy == nil {
		return err
	}
	refused := r.CustomerPolicy.AllowsAction(run.Action)
	if refused == nil {
		return nil
	}
	if err := a.store.FinishActionRun(ctx, run.ID, status.JobFailed, refused.Error()); err != nil {
		return err
	}
	return temporal.NewNonRetryableApplicationError(refused.Error(), "ActionRefused", nil)
}

// createHookRun records a new run for RecordHookRun; the hook's action and
// trigger are the step's name's ("before:migrate", "after:warm:api").
func (a *Actions) createHookRun(ctx context.Context, opID, step string) (store.ActionRun, error) {
	op, err := a.store.GetOperationByID(ctx, opID)
	if err != nil {
		return store.ActionRun{}, err
	}
	trigger, action, ok := contract.ParseHookStep(step)
	if !ok {
		return store.ActionRun{}, invalidConfig(fmt.Errorf("step %q of operation %s is not a hook", step, opID))
	}
	inst, cfg, version, err := a.render.installAt(ctx, op.InstallID, op.ConfigVersion)
	if err != nil {
		return store.ActionRun{}, err
	}
	act, ok := cfg.Action(action)
	if !ok {
		return store.ActionRun{}, invalidConfig(fmt.Errorf("config version %d has no action %q", version, action))
	}
	plain, secret, err := a.hookInputs(ctx, cfg, inst, act, op.Kind, step)
	if err != nil {
		return store.ActionRun{}, err
	}
	id := store.NewID("act")
	return a.store.CreateActionRun(ctx, store.ActionRun{ID: id, OrgID: op.OrgID, InstallID: op.InstallID, Action: action,
		ConfigVersion: version, Trigger: trigger, WorkflowID: contract.ActionRunWorkflowID(op.InstallID, action, id),
		OperationID: opID, OperationStep: step, StartedBy: op.StartedBy, Inputs: plain, SensitiveInputs: secret}, stepNames(act))
}

// hookInputs renders the inputs the trigger of hook step gives its action
// (appconfig.Config.RenderHookInputs), with the install's data as it is
// now: an after-hook's templates see the outputs of what it follows. A
// template that cannot render, or a value the action's input does not take,
// fails the hook.
func (a *Actions) hookInputs(ctx context.Context, cfg *appconfig.Config, inst store.Install, act *appconfig.Action, kind, step string) (plain, secret map[string]string, err error) {
	trigger, _, _ := contract.ParseHookStep(step)
	component := ""
	if parts := strings.SplitN(step, ":", 3); len(parts) == 3 {
		component = parts[2]
	}
	i, ok := act.HookTrigger(trigger, kind, component)
	if !ok || len(act.Triggers[i].Inputs) == 0 {
		return nil, nil, nil
	}
	data, err := a.render.renderData(ctx, cfg, inst)
	if err != nil {
		return nil, nil, err
	}
	if plain, secret, err = cfg.RenderHookInputs(act.Name, i, data); err != nil {
		return nil, nil, nonRetryable("hook inputs", err)
	}
	if _, err := act.CheckRunInputs(mergedInputs(plain, secret)); err != nil {
		msg := err.Error()
		for _, v := range secret {
			if v != "" {
				msg = strings.ReplaceAll(msg, v, appconfig.RedactedValue)
			}
		}
		return nil, nil, temporal.NewNonRetryableApplicationError("hook inputs: "+msg, "InvalidInput", nil)
	}
	return plain, secret, nil
}

// mergedInputs is a run's plain and sensitive inputs together.
func mergedInputs(plain, secret map[string]string) map[string]string {
	out := maps.Clone(plain)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, secret)
	return out
}
