package workflows

import (
	"errors"
	"slices"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
)

// step is one step of an operation: it delivers its build, waits for the
// steps it comes after (or queues its job before they end: prestart), then
// runs its terraform module, chart or image. The store activities on this
// path are local activities.
type step struct {
	opID     string
	plan     contract.OperationPlan
	spec     contract.StepSpec
	approval workflow.Channel
	sched    *scheduler
	jobs     JobPolicy
	// lost collects the status writes that failed (the operation's result
	// says them).
	lost *unrecorded
}

// run runs the step to its end.
func (s *step) run(ctx workflow.Context) stepOutcome {
	if s.spec.Hook != nil {
		return s.runHook(ctx)
	}
	if out, ended := s.skipUnchanged(ctx); ended {
		return out
	}
	var tf terraformRun
	done, outcome, msg := false, status.Step(""), ""
	switch {
	case hasBuild(s.spec) && s.sched.syncsBuild(s.spec):
		build, outcome, msg := s.readyBuildUnlessFailed(ctx)
		if outcome != "" {
			return s.end(ctx, outcome, msg)
		}
		tf.syncBuild = build.BuildID
	case hasBuild(s.spec):
		done, outcome, msg = s.deliverBuild(ctx)
		if done && outcome != status.StepSucceeded && outcome != status.StepPlanned {
			return s.end(ctx, outcome, msg)
		}
	}
	tf.deferInputs = !done && s.oneJob() && s.spec.Type == contract.TypeTerraformModule && s.sched.prestart(ctx, s.spec)
	tf.deferRegistry = tf.deferInputs && tf.syncBuild != "" && s.after(status.SandboxStep) && !s.sched.ended(status.SandboxStep)
	if !tf.deferInputs {
		if out, ended := s.waitDeps(ctx); ended {
			return out
		}
	}
	switch {
	case done:
		return s.endImage(ctx, outcome, msg)
	case s.spec.Type == contract.TypeHelmChart:
		return s.runChart(ctx)
	case contract.DeploysImage(s.spec.Type): // a teardown: nothing runs
		return s.forgetImage(ctx)
	}
	return s.runTerraform(ctx, tf)
}

// waitDeps waits for the steps this one comes after; ended says it cannot
// run (skipped, or cancelled with the operation) and has ended.
func (s *step) waitDeps(ctx workflow.Context) (stepOutcome, bool) {
	skipped := s.sched.waitDeps(ctx, s.spec)
	switch {
	case skipped == "":
		return stepOutcome{}, false
	case ctx.Err() != nil:
		return s.end(ctx, status.StepCancelled, "operation cancelled"), true
	}
	return s.end(ctx, status.StepSkipped, skipped), true
}

// skipUnchanged ends a step that is not changed (an update_inputs step whose
// job renders as it was last applied, a reconcile_drift step not drifted):
// known when the operation began (Unchanged), or, for a step after a changed
// one, once the steps it comes after have ended and it renders as last
// applied (IfChanged).
func (s *step) skipUnchanged(ctx workflow.Context) (stepOutcome, bool) {
	switch {
	case s.spec.Unchanged:
		return s.end(ctx, status.StepUnchanged, ""), true
	case !s.spec.IfChanged:
		return stepOutcome{}, false
	}
	if out, ended := s.waitDeps(ctx); ended {
		return out, true
	}
	var changed bool
	if err := runLocal(ctx, contract.StepRenderChanged, s.opID, s.spec.Name).Get(ctx, &changed); err != nil {
		return s.end(ctx, status.StepFailed, rootMessage(err)), true
	}
	if !changed {
		return s.end(ctx, status.StepUnchanged, ""), true
	}
	return stepOutcome{}, false
}

// oneJob: one plan_apply job plans and applies (approve-all, not
// plan-only).
func (s *step) oneJob() bool {
	return !s.plan.PlanOnly && s.plan.ApprovalMode != status.Prompt
}

// after says whether the step comes after step d.
func (s *step) after(d string) bool {
	return slices.Contains(s.spec.After, d)
}

// setStatus records the step's status (and error), even once the operation
// is cancelled; a write that fails is logged and kept for the operation's
// result (s.lost).
func (s *step) setStatus(ctx workflow.Context, outcome status.Step, msg string) {
	if ctx.Err() != nil {
		ctx, _ = workflow.NewDisconnectedContext(ctx)
	}
	if err := runLocal(ctx, contract.SetStepStatus, s.opID, s.spec.Name, outcome, msg).Get(ctx, nil); err != nil {
		s.lost.add(ctx, "step "+s.spec.Name+"'s status "+string(outcome), err)
	}
}

// end records how the step ended and returns it. A destroy that failed in
// a deprovision with forget is left behind instead (leaveBehind).
func (s *step) end(ctx workflow.Context, outcome status.Step, msg string) stepOutcome {
	if outcome == status.StepFailed && s.spec.Destroy && forgetting(ctx, s.plan) {
		return s.leaveBehind(ctx, msg)
	}
	s.setStatus(ctx, outcome, msg)
	return stepOutcome{Name: s.spec.Name, Status: outcome, Error: msg}
}

// jobKey is the idempotency key of the step's job of the given kind.
func (s *step) jobKey(ctx workflow.Context, kind string) string {
	return workflow.GetInfo(ctx).WorkflowExecution.ID + "/" + s.opID + "/" + s.spec.Name + "/" + kind
}

// runAndRecord runs a job, then the record activity over its result
// (record(opID, step, args..., jobID) into out). status is what the step
// ends with when either does not succeed ("" when both did).
func (s *step) runAndRecord(ctx workflow.Context, job func(workflow.Context) (contract.JobResult, error), out any,
	record string, args ...any) (jobID string, outcome status.Step, msg string) {
	res, err := job(ctx)
	if err != nil {
		outcome, msg = interrupted(ctx, err)
		return res.JobID, outcome, msg
	}
	args = append(append([]any{s.opID, s.spec.Name}, args...), res.JobID)
	if err := runLocal(ctx, record, args...).Get(ctx, out); err != nil {
		return res.JobID, status.StepFailed, rootMessage(err)
	}
	return res.JobID, "", ""
}

// applyPlan is how a terraform and a chart step end once planned: on the
// plan's summary (failed, no changes, applied by a plan_apply job, or
// planned in a plan-only operation); else, after approval when the install
// asks for it, by the job apply runs, recorded by the record activity.
func (s *step) applyPlan(ctx workflow.Context, summary contract.PlanSummary,
	apply func(workflow.Context) (contract.JobResult, error), record string) stepOutcome {
	switch {
	case summary.Failed:
		return s.end(ctx, status.StepFailed, summary.Error)
	case !summary.HasChanges:
		return s.end(ctx, status.StepNoChanges, "")
	case summary.Applied:
		return s.end(ctx, status.StepSucceeded, "")
	case s.plan.PlanOnly:
		return s.end(ctx, status.StepPlanned, "")
	}
	if s.plan.ApprovalMode == status.Prompt {
		if outcome, msg := s.awaitApproval(ctx); outcome != "" {
			return s.end(ctx, outcome, msg)
		}
	}
	var applied contract.ApplySummary
	if _, outcome, msg := s.runAndRecord(ctx, apply, &applied, record); outcome != "" {
		return s.end(ctx, outcome, msg)
	}
	if applied.Failed {
		return s.end(ctx, status.StepFailed, applied.Error)
	}
	return s.end(ctx, status.StepSucceeded, "")
}

// awaitApproval waits for the step's approval signal. It returns the
// status the step ends with when it is not approved ("" when it is).
func (s *step) awaitApproval(ctx workflow.Context) (outcome status.Step, msg string) {
	s.setStatus(ctx, status.StepWaitingApproval, "")
	for {
		var ap contract.Approval
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(s.approval, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, &ap) })
		sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {})
		sel.Select(ctx)
		if ctx.Err() != nil {
			return status.StepCancelled, "operation cancelled while waiting for approval"
		}
		if workflow.GetVersion(ctx, changeApprovalRecorded, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
			if !ap.Approve {
				return status.StepDenied, "plan denied"
			}
			return "", ""
		}
		// The signal wakes the step; the decision is the one the API recorded.
		var decision status.Decision
		if err := runLocal(ctx, contract.StepDecision, s.opID, s.spec.Name).Get(ctx, &decision); err != nil {
			return status.StepFailed, rootMessage(err)
		}
		switch decision {
		case status.DecisionApproved:
			return "", ""
		case status.DecisionDenied:
			return status.StepDenied, "plan denied"
		}
		workflow.GetLogger(ctx).Warn("approval signal without a decision recorded by the API: ignored", "step", s.spec.Name)
	}
}

// changeApprovalRecorded gates reading the recorded decision after an
// approval signal (histories before it acted on the signal alone).
const changeApprovalRecorded = "approval-recorded"

// skipError ends a step as skipped (a dependency did not succeed).
type skipError struct{ msg string }

func (e skipError) Error() string { return e.msg }

// interrupted turns a RunJob error into a step status: cancelled with the
// operation, skipped when a queued job's dependency did not succeed
// (skipError), else failed.
func interrupted(ctx workflow.Context, err error) (status.Step, string) {
	var skipped skipError
	switch {
	case ctx.Err() != nil:
		return status.StepCancelled, "operation cancelled"
	case errors.As(err, &skipped):
		return status.StepSkipped, skipped.msg
	}
	return status.StepFailed, rootMessage(err)
}

// rootMessage is the innermost message of a Temporal error chain, which is
// the one a person wants to read.
func rootMessage(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			var app *temporal.ApplicationError
			if errors.As(err, &app) {
				return app.Message()
			}
			return err.Error()
		}
		err = next
	}
}
