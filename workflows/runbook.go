package workflows

import (
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/workflow"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
)

// RunbookRun runs an install's runbook one step at a time, from the first
// step that has not succeeded (so a resumed run, started again under the
// same ID, does not run again what succeeded), and stops at the first step
// that fails. An action step runs its action run as a child ActionRun; a
// deploy or reprovision step runs its operation as a child of the
// operation's own workflow; an approval gate waits for
// RunbookApproveSignal. Cancelling the run asks the running child to cancel
// (an operation then ends cancelled and frees the install itself, as when
// its own cancel is asked) or ends the gate's wait. Its inputs stay in the
// store.
func RunbookRun(ctx workflow.Context, in contract.RunbookRunInput) (contract.RunbookRunResult, error) {
	out := contract.RunbookRunResult{RunID: in.RunID}
	var plan contract.RunbookRunPlan
	err := call(shortActivity(ctx), contract.LoadRunbookRun, in.RunID).Get(ctx, &plan)
	approvals := workflow.GetSignalChannel(ctx, contract.RunbookApproveSignal)
	st := status.JobSucceeded
	for i := 0; err == nil && i < len(plan.Steps); i++ {
		s := plan.Steps[i]
		if s.Done {
			continue
		}
		var end contract.RunbookStepEnd
		end, err = runRunbookStep(ctx, plan, s, approvals)
		if err == nil && end.Status != string(status.JobSucceeded) {
			st, out.Error = status.JobFailed, fmt.Sprintf("step %s: %s", s.Name, end.Error)
			break
		}
	}
	if err != nil {
		st, out.Error = status.JobFailed, rootMessage(err)
	}
	st, out.Error, err = endRun(ctx, contract.FinishRunbookRun, in.RunID, st, out.Error, err)
	out.Status = string(st)
	return out, err
}

// runRunbookStep starts a step, runs it (its child workflow, or the wait at
// its gate) and records how it ended, also when cancelled.
func runRunbookStep(ctx workflow.Context, plan contract.RunbookRunPlan, s contract.RunbookStepPlan,
	approvals workflow.ReceiveChannel) (contract.RunbookStepEnd, error) {
	var start contract.RunbookStepStart
	if err := call(shortActivity(ctx), contract.BeginRunbookStep, plan.RunID, s.Index).Get(ctx, &start); err != nil {
		return contract.RunbookStepEnd{}, err
	}
	if start.Failed != "" {
		return contract.RunbookStepEnd{Status: string(status.JobFailed), Error: start.Failed}, nil
	}
	why := ""
	if start.Workflow == "" {
		why = awaitGate(ctx, plan.RunID, s.Index, time.Duration(plan.GateWaitMS)*time.Millisecond, approvals)
	} else {
		why = runStepWorkflow(ctx, start)
	}
	if ctx.Err() != nil {
		why = contract.RunbookStepCancelled
	}
	var end contract.RunbookStepEnd
	err := record(ctx, &end, contract.FinishRunbookStep, plan.RunID, s.Index, why)
	return end, err
}

// awaitGate waits until the gate of step index is approved, at most wait;
// it returns why it was not ("" when it was). A signal is only a wake-up:
// the gate opens when the store says someone approved it, so a signal sent
// around the API is ignored.
func awaitGate(ctx workflow.Context, runID string, index int, wait time.Duration, approvals workflow.ReceiveChannel) string {
	approved, timedOut := false, false
	timer := workflow.NewTimer(ctx, wait)
	for !approved && !timedOut && ctx.Err() == nil {
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(approvals, func(c workflow.ReceiveChannel, _ bool) {
			var a contract.RunbookApproval
			c.Receive(ctx, &a)
			if a.Step != index {
				return
			}
			if err := runLocal(ctx, contract.RunbookGateApproved, runID, index).Get(ctx, &approved); err != nil {
				workflow.GetLogger(ctx).Warn("reading a gate's approval failed", "run", runID, "step", index, "err", err)
			}
		})
		sel.AddFuture(timer, func(workflow.Future) { timedOut = true })
		sel.Select(ctx)
	}
	if !approved {
		return fmt.Sprintf("not approved within %s", wait)
	}
	return ""
}

// runStepWorkflow runs a step's action run or operation as a child
// workflow; it returns why the child did not start ("" when it ran: how it
// ended is in the store). The child's own timeouts bound it.
func runStepWorkflow(ctx workflow.Context, start contract.RunbookStepStart) string {
	var arg any = contract.OperationInput{OperationID: start.OperationID}
	closePolicy := enumspb.PARENT_CLOSE_POLICY_ABANDON
	if start.ActionRunID != "" {
		arg = contract.ActionRunInput{RunID: start.ActionRunID, InstallID: start.InstallID, Action: start.Action}
		closePolicy = enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            start.WorkflowID,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		ParentClosePolicy:     closePolicy,
	})
	child := workflow.ExecuteChildWorkflow(cctx, start.Workflow, arg)
	if err := child.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
		return contract.RunbookChildNotStarted + rootMessage(err)
	}
	_ = child.Get(ctx, nil) // how it ended is in the store
	return ""
}
