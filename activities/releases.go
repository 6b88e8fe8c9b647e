package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// releaseStore is what the release activities read and write of the store.
type releaseStore interface {
	GetReleaseByID(ctx context.Context, id string) (store.Release, error)
	GetInstall(ctx context.Context, orgID, id string) (store.Install, error)
	GetOperationByID(ctx context.Context, opID string) (store.InstallOperation, error)
	StartOperation(ctx context.Context, op store.InstallOperation) (store.InstallOperation, error)
	FinishOperation(ctx context.Context, opID string, opStatus status.Op, errMsg string, installStatus status.Install) error
	UpdateReleaseInstall(ctx context.Context, releaseID, installID string, change store.ReleaseInstallChange) error
	SetReleaseStatus(ctx context.Context, id string, st status.Release, why string) error
	SkipPendingReleaseInstalls(ctx context.Context, releaseID string) error
	HealthOfInstalls(ctx context.Context, installIDs []string, now time.Time, window time.Duration) (map[string]store.InstallHealth, error)
}

// Releases are the activities of a release: its batches, each install's
// deploy_config operation, and the release's and its installs' statuses.
type Releases struct {
	store  releaseStore
	events *events
	// onlineWindow: a runner not seen within it is offline (its install's
	// health unknown).
	onlineWindow time.Duration
}

// LoadRelease reads a release's batches.
func (a *Releases) LoadRelease(ctx context.Context, releaseID string) (contract.ReleasePlan, error) {
	r, err := a.store.GetReleaseByID(ctx, releaseID)
	if err != nil {
		return contract.ReleasePlan{}, err
	}
	plan := contract.ReleasePlan{PauseBetween: time.Duration(r.PauseMS) * time.Millisecond, FailureThreshold: r.FailureThreshold,
		Soak: time.Duration(r.SoakMS) * time.Millisecond, OnUnhealthy: r.OnUnhealthy}
	if plan.OnUnhealthy == "" {
		plan.OnUnhealthy = contract.OnUnhealthyHalt
	}
	for _, ri := range r.Installs {
		for len(plan.Batches) <= ri.Batch {
			plan.Batches = append(plan.Batches, nil)
		}
		plan.Batches[ri.Batch] = append(plan.Batches[ri.Batch], ri.InstallID)
	}
	return plan, nil
}

// BeginReleaseDeploy starts the install's deploy_config operation to the
// version the release brings it to, recording the version it ran before
// (once: a retry after a failure keeps the first). An install busy with
// another operation fails in the release, with the reason.
func (a *Releases) BeginReleaseDeploy(ctx context.Context, releaseID, installID string) (contract.ReleaseDeploy, error) {
	ri, inst, err := a.releaseInstall(ctx, releaseID, installID)
	if err != nil {
		return contract.ReleaseDeploy{}, err
	}
	from := ri.FromVersion
	if ri.OperationID == "" {
		from = inst.ConfigVersion
	}
	op, err := a.store.StartOperation(ctx, store.InstallOperation{OrgID: inst.OrgID, InstallID: inst.ID,
		Kind: contract.OpDeployConfig, ConfigVersion: ri.ToVersion, ApprovalMode: inst.ApprovalMode,
		WorkflowID: contract.OperationWorkflowID(inst.ID, contract.OpDeployConfig, "")})
	if errors.Is(err, store.ErrConflict) {
		why := fmt.Sprintf("install %s not deployed: %v", inst.Name, errors.Unwrap(err))
		return contract.ReleaseDeploy{Failed: why}, a.store.UpdateReleaseInstall(ctx, releaseID, installID,
			store.ReleaseInstallChange{Status: status.ReleaseInstallFailed, Error: &why, FromVersion: &from})
	}
	if err != nil {
		return contract.ReleaseDeploy{}, err
	}
	return contract.ReleaseDeploy{OperationID: op.ID, WorkflowID: op.WorkflowID}, a.store.UpdateReleaseInstall(ctx, releaseID, installID,
		store.ReleaseInstallChange{Status: status.ReleaseInstallRunning, Error: new(""), FromVersion: &from, OperationID: &op.ID})
}

// FinishReleaseDeploy records how the install's operation ended; it returns
// why it failed ("" when it succeeded). An operation whose workflow never
// started (startErr) is recorded failed first.
func (a *Releases) FinishReleaseDeploy(ctx context.Context, releaseID, installID, opID, startErr string) (string, error) {
	return a.finishOperation(ctx, releaseID, installID, opID, startErr, "operation",
		store.ReleaseInstallChange{Status: status.ReleaseInstallSucceeded, Error: new("")})
}

// finishOperation records how an install's operation (what: "operation",
// "rollback operation") ended: succeeded as the change says, or failed with
// why (returned; "" when it succeeded).
func (a *Releases) finishOperation(ctx context.Context, releaseID, installID, opID, startErr, what string,
	succeeded store.ReleaseInstallChange) (string, error) {
	op, err := a.endedOperation(ctx, opID, startErr)
	if err != nil {
		return "", err
	}
	ri, _, err := a.releaseInstall(ctx, releaseID, installID)
	if err != nil {
		return "", err
	}
	change, why := succeeded, ""
	if op.Status != status.OpSucceeded {
		why = fmt.Sprintf("install %s: %s %s %s: %s", ri.InstallName, what, op.ID, op.Status, op.Error)
		change.Status, change.Error = status.ReleaseInstallFailed, &why
	}
	return why, a.store.UpdateReleaseInstall(ctx, releaseID, installID, change)
}

// endedOperation reads a release's operation once its workflow ended; one
// whose workflow never started (startErr) is recorded failed first.
func (a *Releases) endedOperation(ctx context.Context, opID, startErr string) (store.InstallOperation, error) {
	if startErr != "" {
		if err := a.store.FinishOperation(ctx, opID, status.OpFailed, startErr, ""); err != nil {
			return store.InstallOperation{}, err
		}
	}
	return a.store.GetOperationByID(ctx, opID)
}

// WaitForWindow records that the install's deploy waits until a time.
func (a *Releases) WaitForWindow(ctx context.Context, releaseID, installID string, until time.Time) error {
	return a.store.UpdateReleaseInstall(ctx, releaseID, installID, store.ReleaseInstallChange{Status: status.ReleaseInstallWaiting, WaitingUntil: until})
}

// SetReleaseStatus records the release's status (halted: with why).
func (a *Releases) SetReleaseStatus(ctx context.Context, releaseID string, st status.Release, why string) error {
	if err := a.store.SetReleaseStatus(ctx, releaseID, st, why); err != nil {
		return err
	}
	return a.events.releaseEnded(ctx, releaseID, st)
}

// SkipReleaseInstalls marks the installs a cancelled release did not reach.
func (a *Releases) SkipReleaseInstalls(ctx context.Context, releaseID string) error {
	return a.store.SkipPendingReleaseInstalls(ctx, releaseID)
}

func (a *Releases) releaseInstall(ctx context.Context, releaseID, installID string) (store.ReleaseInstall, store.Install, error) {
	r, err := a.store.GetReleaseByID(ctx, releaseID)
	if err != nil {
		return store.ReleaseInstall{}, store.Install{}, err
	}
	for _, ri := range r.Installs {
		if ri.InstallID == installID {
			inst, err := a.store.GetInstall(ctx, r.OrgID, installID)
			return ri, inst, err
		}
	}
	return store.ReleaseInstall{}, store.Install{}, fmt.Errorf("install %s is not in release %s: %w", installID, releaseID, store.ErrNotFound)
}
