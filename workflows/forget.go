package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
)

// changeForget gates deprovision with forget (histories before it never
// had a plan that forgets): docs/architecture/temporal.md, "Workflow
// versions".
const changeForget = "deprovision-forget"

// forgetting: the operation is a deprovision with forget, not cancelled,
// whose history knows the change.
func forgetting(ctx workflow.Context, plan contract.OperationPlan) bool {
	return plan.Forget && ctx.Err() == nil &&
		workflow.GetVersion(ctx, changeForget, workflow.DefaultVersion, 1) == 1
}

// leaveBehind ends a step a deprovision with forget could not destroy (why:
// msg): LeaveBehind records what it left behind and forgets it, and the
// steps after it go on. When that record fails the step fails, as it would
// have without forget.
func (s *step) leaveBehind(ctx workflow.Context, msg string) stepOutcome {
	var left []string
	if err := runLocal(ctx, contract.LeaveBehind, s.opID, s.spec.Name, msg).Get(ctx, &left); err != nil {
		msg += "; recording what it left behind failed: " + rootMessage(err)
		s.setStatus(ctx, status.StepFailed, msg)
		return stepOutcome{Name: s.spec.Name, Status: status.StepFailed, Error: msg}
	}
	workflow.GetLogger(ctx).Warn("step left behind", "operation", s.opID, "step", s.spec.Name, "left_behind", left, "why", msg)
	return stepOutcome{Name: s.spec.Name, Status: status.StepLeftBehind, Error: msg, LeftBehind: left}
}

// leaveAllBehind ends every step of a deprovision with forget whose runner
// did not come (why: msg) as left behind: nothing could be destroyed.
func (s *scheduler) leaveAllBehind(ctx workflow.Context, msg string) {
	for _, st := range s.plan.Steps {
		s.started[st.Name] = true
		if st.Hook != nil { // a hook leaves nothing: it did not run
			s.outcomes[st.Name] = s.step(st).end(ctx, status.StepSkipped, "skipped: "+msg)
			continue
		}
		s.outcomes[st.Name] = s.step(st).leaveBehind(ctx, msg)
	}
}
