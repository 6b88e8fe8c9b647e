package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/jobmanifest"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// operationStore is what an operation's beginning and end read and write of
// the store.
type operationStore interface {
	GetOperationByID(ctx context.Context, opID string) (store.InstallOperation, error)
	GetInstall(ctx context.Context, orgID, id string) (store.Install, error)
	GetInstallRunner(ctx context.Context, orgID, installID string) (store.Runner, error)
	AddSteps(ctx context.Context, opID string, steps []store.NewStep) error
	SetInstallStatus(ctx context.Context, installID string, st status.Install) error
	SetOperationStatus(ctx context.Context, opID string, st status.Op) error
	SetOperationWaitingReason(ctx context.Context, opID string, st status.Op, reason string) error
	FinishOperation(ctx context.Context, opID string, opStatus status.Op, errMsg string, installStatus status.Install) error
	MarkInputsSensitive(ctx context.Context, installID string, names []string) error
}

// Operations are the activities that begin an install operation (its plan
// of steps), wait for the install's runner, and end it.
type Operations struct {
	store  operationStore
	plan   *planner
	cfg    OperationConfig
	events *events
}

// BeginOperation turns a recorded operation into its plan of steps.
func (a *Operations) BeginOperation(ctx context.Context, opID string) (contract.OperationPlan, error) {
	op, err := a.store.GetOperationByID(ctx, opID)
	if err != nil {
		return contract.OperationPlan{}, err
	}
	p, err := a.plan.plan(ctx, op)
	if err != nil {
		return contract.OperationPlan{}, err
	}
	cfg, err := a.sealDeclaredSensitive(ctx, op, p.ConfigVersion)
	if err != nil {
		return contract.OperationPlan{}, err
	}
	p.Steps = jobmanifest.WithHooks(op.Kind, op.PlanOnly, p.Steps, cfg.Actions)
	p.RunnerTimeout, p.JobWait = a.cfg.RunnerTimeout, a.cfg.JobWait
	p.Forget = op.Forget && op.Kind == contract.OpDeprovision
	rows := make([]store.NewStep, len(p.Steps))
	for i, st := range p.Steps {
		rows[i] = store.NewStep{Name: st.Name, After: st.After, Destroy: st.Destroy}
	}
	if err := a.store.AddSteps(ctx, opID, rows); err != nil {
		return contract.OperationPlan{}, err
	}
	if err := a.installStatuses(ctx, op, &p); err != nil {
		return contract.OperationPlan{}, err
	}
	if op.Kind == contract.OpProvision || op.Kind == contract.OpReprovision || op.Kind == contract.OpDeprovision {
		return p, a.store.SetInstallStatus(ctx, op.InstallID, runningInstallStatus(op.Kind))
	}
	return p, nil
}

// sealDeclaredSensitive seals the install's inputs that the config version
// the operation runs declares sensitive, though set when they were not; it
// returns that config.
func (a *Operations) sealDeclaredSensitive(ctx context.Context, op store.InstallOperation, version int) (*appconfig.Config, error) {
	inst, err := a.store.GetInstall(ctx, op.OrgID, op.InstallID)
	if err != nil {
		return nil, err
	}
	cfg, _, err := a.plan.render.installConfig(ctx, op.OrgID, inst.AppID, version)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, in := range cfg.Inputs {
		if in.Sensitive {
			names = append(names, in.Name)
		}
	}
	return cfg, a.store.MarkInputsSensitive(ctx, op.InstallID, names)
}

// installStatuses are the statuses the install takes when the operation
// ends: succeeded, failed, or interrupted (denied, cancelled, plan-only).
func (a *Operations) installStatuses(ctx context.Context, op store.InstallOperation, p *contract.OperationPlan) error {
	p.SucceededInstallStatus, p.FailedInstallStatus, p.InterruptedInstallStatus = status.InstallActive, status.InstallFailed, status.InstallFailed
	if op.Kind == contract.OpDeprovision {
		p.SucceededInstallStatus = status.InstallDeprovisioned
	}
	switch op.Kind {
	case contract.OpDeployComponent, contract.OpTeardownComponent, contract.OpUpdateInputs, contract.OpDeployConfig,
		contract.OpDriftCheck, contract.OpReconcileDrift:
	default:
		return nil
	}
	// A component operation, an input update or a reconcile does not change what the install is; a
	// config deploy that ends well leaves it active, one denied or plan-only as it was.
	inst, err := a.store.GetInstall(ctx, op.OrgID, op.InstallID)
	if err != nil {
		return err
	}
	p.SucceededInstallStatus, p.InterruptedInstallStatus = inst.Status, inst.Status
	switch op.Kind {
	case contract.OpDeployConfig:
		p.SucceededInstallStatus = status.InstallActive
	case contract.OpDriftCheck: // a check changes nothing, not even when it fails
		p.FailedInstallStatus = inst.Status
		p.DriftReconcile = inst.DriftReconcile && inst.ApprovalMode == status.ApproveAll
	}
	return nil
}

// FailedInstallStatus is the status an install takes when an operation of
// kind fails: failed after a provision, reprovision or deprovision; ""
// (unchanged) after any other, which does not change what the install is.
// The worker's sweeper uses it too.
func FailedInstallStatus(kind string) status.Install {
	if kind == contract.OpProvision || kind == contract.OpReprovision || kind == contract.OpDeprovision {
		return status.InstallFailed
	}
	return ""
}

// runningInstallStatus is the status of an install while a provision,
// reprovision or deprovision runs.
func runningInstallStatus(kind string) status.Install {
	if kind == contract.OpDeprovision {
		return status.InstallDeprovisioning
	}
	return status.InstallProvisioning
}

// WaitForRunner returns once the install's runner is online and not paused,
// showing the operation and install as waiting for it meanwhile (with the
// reason when its customer paused it); it fails clearly when the runner does
// not come within timeout. A pause stops that clock: while the runner is
// paused, the activity ends before its own timeout with a RunnerPaused error
// and the workflow waits again (awaitRunner), so a paused runner never fails
// an operation.
func (a *Operations) WaitForRunner(ctx context.Context, opID string, timeout time.Duration) (contract.RunnerInfo, error) {
	op, err := a.store.GetOperationByID(ctx, opID)
	if err != nil {
		return contract.RunnerInfo{}, err
	}
	deadline := time.Now().Add(timeout)
	shown := "-"
	runnerID := "unknown"
	for {
		r, info, online, err := a.runnerOf(ctx, op)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return contract.RunnerInfo{}, err
		case err != nil:
			// The database is away (a restart): wait on, as for the runner.
		default:
			runnerID = r.ID
		}
		if online {
			if shown != "-" {
				a.store.SetOperationWaitingReason(ctx, opID, status.OpRunning, "")
			}
			return info, nil
		}
		reason := ""
		if r.PausedSince != nil {
			reason = contract.RunnerPausedReason(*r.PausedSince)
			deadline = time.Now().Add(timeout)
			if d, ok := activityDeadline(ctx); ok && time.Until(d) < pausedLeave {
				return contract.RunnerInfo{}, temporal.NewNonRetryableApplicationError(reason, contract.ErrRunnerPaused, nil)
			}
		}
		if shown != reason {
			shown = reason
			a.showWaiting(ctx, op, reason)
		}
		if time.Now().After(deadline) {
			return contract.RunnerInfo{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("the install's runner (%s) did not come online within %s: is it running, and can it reach the gateway?", runnerID, timeout),
				"RunnerOffline", nil)
		}
		activity.RecordHeartbeat(ctx)
		select {
		case <-ctx.Done():
			return contract.RunnerInfo{}, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// pausedLeave is how long before its own deadline WaitForRunner hands a
// paused runner's wait back to the workflow.
const pausedLeave = 30 * time.Second

// activityDeadline is the running activity's deadline, when it runs as one.
func activityDeadline(ctx context.Context) (d time.Time, ok bool) {
	defer func() { _ = recover() }() // not in an activity (a plain call)
	d = activity.GetInfo(ctx).Deadline
	return d, !d.IsZero()
}

// showWaiting shows the operation (and a provisioned install) waiting for
// the runner; a failure to show it does not stop the wait.
func (a *Operations) showWaiting(ctx context.Context, op store.InstallOperation, reason string) {
	a.store.SetOperationWaitingReason(ctx, op.ID, status.OpWaitingForRunner, reason)
	if op.Kind == contract.OpProvision {
		a.store.SetInstallStatus(ctx, op.InstallID, status.InstallWaitingForRunner)
	}
}

// RunnerOnline is WaitForRunner's quick look, for a local activity: the
// install's runner, if it is online now (else Online is false, and nothing
// is recorded: WaitForRunner waits).
func (a *Operations) RunnerOnline(ctx context.Context, opID string) (contract.RunnerCheck, error) {
	op, err := a.store.GetOperationByID(ctx, opID)
	if err != nil {
		return contract.RunnerCheck{}, err
	}
	_, info, online, err := a.runnerOf(ctx, op)
	return contract.RunnerCheck{Online: online, Runner: info}, err
}

// runnerOf is the operation's install's runner, what it can do, and whether
// it is online (seen within the online window).
func (a *Operations) runnerOf(ctx context.Context, op store.InstallOperation) (store.Runner, contract.RunnerInfo, bool, error) {
	r, err := a.store.GetInstallRunner(ctx, op.OrgID, op.InstallID)
	if err != nil {
		return r, contract.RunnerInfo{}, false, err
	}
	info := contract.RunnerInfo{DeferredInputs: slices.Contains(r.Capabilities, protocol.CapabilityDeferredInputs),
		ModuleSync: slices.Contains(r.Capabilities, protocol.CapabilityModuleSync)}
	return r, info, r.LastSeenAt != nil && time.Since(*r.LastSeenAt) < a.cfg.OnlineWindow && r.PausedSince == nil, nil
}

// FinishOperation records the operation's end and frees the install.
func (a *Operations) FinishOperation(ctx context.Context, opID string, opStatus status.Op, errMsg string, installStatus status.Install) error {
	if err := a.store.FinishOperation(ctx, opID, opStatus, errMsg, installStatus); err != nil {
		return err
	}
	return a.events.operationEnded(ctx, opID, opStatus)
}
