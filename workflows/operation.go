package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
)

// ProvisionInstall waits for the install's runner, applies the sandbox, then
// every component in dependency order, independent ones in parallel.
func ProvisionInstall(ctx workflow.Context, in contract.OperationInput) (contract.OperationResult, error) {
	return runOperation(ctx, in)
}

// DeprovisionInstall destroys every component in reverse dependency order,
// then the sandbox.
func DeprovisionInstall(ctx workflow.Context, in contract.OperationInput) (contract.OperationResult, error) {
	return runOperation(ctx, in)
}

// ReprovisionInstall re-plans and applies the sandbox and every component
// (a no-op plan skips its apply).
func ReprovisionInstall(ctx workflow.Context, in contract.OperationInput) (contract.OperationResult, error) {
	return runOperation(ctx, in)
}

// DeployComponent deploys one component (and its dependents if asked).
func DeployComponent(ctx workflow.Context, in contract.OperationInput) (contract.OperationResult, error) {
	return runOperation(ctx, in)
}

// TeardownComponent destroys one component (and its dependents first, if
// asked).
func TeardownComponent(ctx workflow.Context, in contract.OperationInput) (contract.OperationResult, error) {
	return runOperation(ctx, in)
}

// UpdateInputs applies a change of the install's inputs: it runs the sandbox
// and the components whose job renders differently now; the others end
// unchanged.
func UpdateInputs(ctx workflow.Context, in contract.OperationInput) (contract.OperationResult, error) {
	return runOperation(ctx, in)
}

// DeployConfig brings the install to a config version: the sandbox and the
// components whose build or job changed run, the others end unchanged, and
// the components the version removed are torn down last.
func DeployConfig(ctx workflow.Context, in contract.OperationInput) (contract.OperationResult, error) {
	return runOperation(ctx, in)
}

// ReconcileDrift applies what a drift check found drifted: the drifted steps
// are planned and applied, each step after one of them runs if its job
// renders differently once they have ended, and every other step ends
// unchanged.
func ReconcileDrift(ctx workflow.Context, in contract.OperationInput) (contract.OperationResult, error) {
	return runOperation(ctx, in)
}

// runOperation is every operation workflow: BeginOperation plans the steps, the install's
// maintenance window is waited for when the operation asks (a timer), the runner is
// waited for (WaitForRunner only when it is not online now), the scheduler runs the steps,
// and FinishOperation records the end.
func runOperation(ctx workflow.Context, in contract.OperationInput) (contract.OperationResult, error) {
	var plan contract.OperationPlan
	if err := runLocal(ctx, contract.BeginOperation, in.OperationID).Get(ctx, &plan); err != nil {
		return beginFailed(ctx, in.OperationID, err)
	}
	if plan.InMaintenanceWindow {
		if _, err := AwaitMaintenanceWindow(ctx, plan.InstallID, in.OperationID); err != nil {
			res := contract.OperationResult{Status: status.OpFailed, Steps: map[string]status.Step{}, Error: rootMessage(err)}
			if temporal.IsCanceledError(err) {
				res.Status, res.Error = status.OpCancelled, ""
			}
			return finishOperation(ctx, in.OperationID, res, installStatus(plan, res.Status))
		}
	}
	runner, err := awaitRunner(ctx, in.OperationID, plan.RunnerTimeout)
	if err != nil && forgetting(ctx, plan) { // a deprovision with forget: nothing could be destroyed
		s := newScheduler(ctx, in.OperationID, plan, runner)
		s.leaveAllBehind(ctx, rootMessage(err))
		res := s.result(ctx)
		reconcileActionSchedules(ctx, plan, res.Status)
		return finishOperation(ctx, in.OperationID, res, installStatus(plan, res.Status))
	}
	if err != nil {
		res := contract.OperationResult{Status: status.OpFailed, Steps: map[string]status.Step{}, Error: rootMessage(err)}
		return finishOperation(ctx, in.OperationID, res, plan.FailedInstallStatus)
	}
	s := newScheduler(ctx, in.OperationID, plan, runner)
	s.receiveApprovals(ctx)
	s.run(ctx)
	res := s.result(ctx)
	reconcileActionSchedules(ctx, plan, res.Status)
	return finishOperation(ctx, in.OperationID, res, installStatus(plan, res.Status))
}

// awaitRunner looks at the install's runner and, when it is not online,
// waits for it.
func awaitRunner(ctx workflow.Context, opID string, timeout time.Duration) (contract.RunnerInfo, error) {
	waitCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: timeout + time.Minute,
		HeartbeatTimeout:    awaitHeartbeat,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
	})
	var check contract.RunnerCheck
	if err := runLocal(ctx, contract.RunnerOnline, opID).Get(ctx, &check); err != nil {
		return check.Runner, err
	}
	runner := check.Runner
	if check.Online {
		return runner, nil
	}
	for {
		err := call(waitCtx, contract.WaitForRunner, opID, timeout).Get(ctx, &runner)
		// A runner its customer paused: wait again, never fail (old histories never saw this error).
		var appErr *temporal.ApplicationError
		if errors.As(err, &appErr) && appErr.Type() == contract.ErrRunnerPaused &&
			workflow.GetVersion(ctx, "runner-paused-wait", workflow.DefaultVersion, 1) == 1 {
			continue
		}
		return runner, err
	}
}

// finishOnBeginFailure is the change that finishes an operation whose
// BeginOperation failed (before it, the workflow ended leaving the install
// locked): docs/architecture/temporal.md, "Workflow versions".
const finishOnBeginFailure = "finish-on-begin-failure"

// beginFailed ends an operation whose BeginOperation failed (a
// non-retryable error, or the database away past the local activity's
// limit): it is finished, failed (cancelled when the workflow was), and the
// install's status left as it was.
func beginFailed(ctx workflow.Context, opID string, err error) (contract.OperationResult, error) {
	if workflow.GetVersion(ctx, finishOnBeginFailure, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return contract.OperationResult{Status: status.OpFailed, Error: err.Error()}, err
	}
	workflow.GetLogger(ctx).Error("beginning the operation failed", "operation", opID, "error", err)
	res := contract.OperationResult{Status: status.OpFailed, Steps: map[string]status.Step{},
		Error: "beginning the operation: " + rootMessage(err)}
	if temporal.IsCanceledError(err) {
		res.Status, res.Error = status.OpCancelled, ""
	}
	return finishOperation(ctx, opID, res, "")
}

// finishOperation records the operation's end (even when it was cancelled)
// and releases the install's lock. A failed operation fails its workflow;
// one whose end could not be recorded too (the worker's sweeper records it
// once the database answers).
func finishOperation(ctx workflow.Context, opID string, res contract.OperationResult, installStatus status.Install) (contract.OperationResult, error) {
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	err := runLocal(dctx, contract.FinishOperation, opID, res.Status, res.Error, installStatus).Get(dctx, nil)
	if err != nil {
		workflow.GetLogger(ctx).Error("recording the operation's end failed", "operation", opID, "status", res.Status, "error", err)
	}
	if res.Status == status.OpFailed && res.Error != "" {
		return res, temporal.NewNonRetryableApplicationError(res.Error, "OperationFailed", nil)
	}
	return res, err
}

// installStatus is the status the install takes when the operation ends
// with status.
func installStatus(plan contract.OperationPlan, outcome status.Op) status.Install {
	switch {
	case outcome == status.OpFailed:
		return plan.FailedInstallStatus
	case outcome == status.OpDenied, outcome == status.OpCancelled:
		return plan.InterruptedInstallStatus
	case plan.PlanOnly:
		return plan.InterruptedInstallStatus
	}
	return plan.SucceededInstallStatus
}
