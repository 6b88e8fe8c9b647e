package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
)

// changeActionHooks is the change that runs hook steps (a plan's steps
// with a Hook): docs/architecture/action-runs.md, Hooks.
const changeActionHooks = "action-hooks"

// isAfterHook: st is an after-hook's step.
func isAfterHook(st contract.StepSpec) bool {
	return st.Hook != nil && st.Hook.Trigger == "after"
}

// runHook runs a hook step: once the steps it follows allow it (a
// before-hook: they succeeded; an after-hook: its When), its action runs as
// a child ActionRun workflow, and the step ends as the run did.
func (s *step) runHook(ctx workflow.Context) stepOutcome {
	if workflow.GetVersion(ctx, changeActionHooks, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return s.end(ctx, status.StepSkipped, "skipped: hooks do not run in this workflow's version")
	}
	if isAfterHook(s.spec) {
		if outcome, msg := s.sched.afterHookGate(ctx, s.spec); outcome != "" {
			return s.end(ctx, outcome, msg)
		}
	} else if out, ended := s.waitDeps(ctx); ended {
		return out
	}
	if c := s.spec.Hook.Component; c != "" && s.sched.specs[c].IfChanged {
		var changed bool
		if err := runLocal(ctx, contract.StepRenderChanged, s.opID, c).Get(ctx, &changed); err != nil {
			return s.end(ctx, status.StepFailed, rootMessage(err))
		}
		if !changed {
			return s.end(ctx, status.StepUnchanged, "")
		}
	}
	return s.runHookAction(ctx)
}

// runHookAction records the hook's action run and runs it as a child
// workflow (install/<id>/action/<name>/<run id>).
func (s *step) runHookAction(ctx workflow.Context) stepOutcome {
	var plan contract.ActionRunPlan
	if err := call(shortActivity(ctx), contract.RecordHookRun, s.opID, s.spec.Name).Get(ctx, &plan); err != nil {
		return s.end(ctx, status.StepFailed, fmt.Sprintf("action %s: %s", s.spec.Hook.Action, rootMessage(err)))
	}
	s.setStatus(ctx, status.StepApplying, "")
	perStep := time.Duration(plan.StepTimeoutMS)*time.Millisecond + 15*time.Minute
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:               contract.ActionRunWorkflowID(plan.InstallID, plan.Action, plan.RunID),
		WorkflowExecutionTimeout: time.Duration(len(plan.Steps)+1) * perStep,
	})
	var res contract.ActionRunResult
	err := workflow.ExecuteChildWorkflow(cctx, contract.WorkflowActionRun, contract.ActionRunInput{RunID: plan.RunID}).Get(ctx, &res)
	switch {
	case ctx.Err() != nil:
		return s.end(ctx, status.StepCancelled, "operation cancelled")
	case err != nil:
		return s.end(ctx, status.StepFailed, fmt.Sprintf("action %s (run %s): %s", plan.Action, plan.RunID, rootMessage(err)))
	case res.Status != string(status.JobSucceeded):
		return s.end(ctx, status.StepFailed, fmt.Sprintf("action %s (run %s): %s", plan.Action, plan.RunID, res.Error))
	}
	return s.end(ctx, status.StepSucceeded, "")
}

// afterHookGate waits until every step the after-hook st follows has ended
// and says whether it runs ("" outcome) or how it ends without running: a
// component's hook when the component's step did not run (skipped,
// unchanged, cancelled, denied); then by its When: success runs only if
// every step it follows succeeded, failure only if one did not, always (a
// hook among them that did not run counts for neither).
func (s *scheduler) afterHookGate(ctx workflow.Context, st contract.StepSpec) (status.Step, string) {
	_ = workflow.Await(ctx, func() bool {
		for _, d := range st.After {
			if !s.settled(d) {
				return false
			}
		}
		return true
	})
	if ctx.Err() != nil {
		return status.StepCancelled, "operation cancelled"
	}
	if c := st.Hook.Component; c != "" {
		switch o := s.outcomes[c]; o.Status {
		case status.StepUnchanged:
			return status.StepUnchanged, ""
		case status.StepSucceeded, status.StepNoChanges, status.StepFailed, status.StepLeftBehind:
		default:
			return status.StepSkipped, "skipped: " + c + " did not run"
		}
	}
	notOK := ""
	for _, d := range st.After {
		o, ok := s.outcomes[d]
		if ok && s.specs[d].Hook != nil && (o.Status == status.StepSkipped || o.Status == status.StepUnchanged) {
			continue // a hook that did not run (its own when, its component not run): what it follows decides
		}
		if !ok || !s.ok(d, o) {
			notOK = d
			break
		}
	}
	switch {
	case st.Hook.When == "failure" && notOK == "":
		return status.StepSkipped, "skipped: when = failure, and every step it follows succeeded"
	case (st.Hook.When == "success" || st.Hook.When == "") && notOK != "":
		return status.StepSkipped, "skipped: when = success, and " + notOK + " did not succeed"
	}
	return "", ""
}
