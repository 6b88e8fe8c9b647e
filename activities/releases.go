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

// LoadRelease reads a release's batches.
func (a *Activities) LoadRelease(ctx context.Context, releaseID string) (contract.ReleasePlan, error) {
	r, err := a.Store.GetReleaseByID(ctx, releaseID)
	if err != nil {
		return contract.ReleasePlan{}, err
	}
	plan := contract.ReleasePlan{PauseBetween: time.Duration(r.PauseMS) * time.Millisecond, FailureThreshold: r.FailureThreshold}
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
func (a *Activities) BeginReleaseDeploy(ctx context.Context, releaseID, installID string) (contract.ReleaseDeploy, error) {
	ri, inst, err := a.releaseInstall(ctx, releaseID, installID)
	if err != nil {
		return contract.ReleaseDeploy{}, err
	}
	from := ri.FromVersion
	if ri.OperationID == "" {
		from = inst.ConfigVersion
	}
	op, err := a.Store.StartOperation(ctx, store.InstallOperation{OrgID: inst.OrgID, InstallID: inst.ID,
		Kind: store.OpDeployConfig, ConfigVersion: ri.ToVersion, ApprovalMode: inst.ApprovalMode,
		WorkflowID: contract.OperationWorkflowID(inst.ID, contract.OpDeployConfig, "")})
	if errors.Is(err, store.ErrConflict) {
		why := fmt.Sprintf("install %s not deployed: %v", inst.Name, errors.Unwrap(err))
		return contract.ReleaseDeploy{Failed: why}, a.Store.UpdateReleaseInstall(ctx, releaseID, installID,
			store.ReleaseInstallChange{Status: status.ReleaseInstallFailed, Error: &why, FromVersion: &from})
	}
	if err != nil {
		return contract.ReleaseDeploy{}, err
	}
	return contract.ReleaseDeploy{OperationID: op.ID, WorkflowID: op.WorkflowID}, a.Store.UpdateReleaseInstall(ctx, releaseID, installID,
		store.ReleaseInstallChange{Status: status.ReleaseInstallRunning, Error: new(""), FromVersion: &from, OperationID: &op.ID})
}

// FinishReleaseDeploy records how the install's operation ended; it returns
// why it failed ("" when it succeeded). An operation whose workflow never
// started (startErr) is recorded failed first.
func (a *Activities) FinishReleaseDeploy(ctx context.Context, releaseID, installID, opID, startErr string) (string, error) {
	if startErr != "" {
		if err := a.Store.FinishOperation(ctx, opID, status.OpFailed, startErr, ""); err != nil {
			return "", err
		}
	}
	op, err := a.Store.GetOperationByID(ctx, opID)
	if err != nil {
		return "", err
	}
	ri, _, err := a.releaseInstall(ctx, releaseID, installID)
	if err != nil {
		return "", err
	}
	change := store.ReleaseInstallChange{Status: status.ReleaseInstallSucceeded, Error: new("")}
	if op.Status != status.OpSucceeded {
		why := fmt.Sprintf("install %s: operation %s %s: %s", ri.InstallName, op.ID, op.Status, op.Error)
		change.Status, change.Error = status.ReleaseInstallFailed, &why
	}
	return *change.Error, a.Store.UpdateReleaseInstall(ctx, releaseID, installID, change)
}

// WaitForWindow records that the install's deploy waits until a time.
func (a *Activities) WaitForWindow(ctx context.Context, releaseID, installID string, until time.Time) error {
	return a.Store.UpdateReleaseInstall(ctx, releaseID, installID, store.ReleaseInstallChange{Status: status.ReleaseInstallWaiting, WaitingUntil: until})
}

// SetReleaseStatus records the release's status (halted: with why).
func (a *Activities) SetReleaseStatus(ctx context.Context, releaseID string, st status.Release, why string) error {
	return a.Store.SetReleaseStatus(ctx, releaseID, st, why)
}

// SkipReleaseInstalls marks the installs a cancelled release did not reach.
func (a *Activities) SkipReleaseInstalls(ctx context.Context, releaseID string) error {
	return a.Store.SkipPendingReleaseInstalls(ctx, releaseID)
}

func (a *Activities) releaseInstall(ctx context.Context, releaseID, installID string) (store.ReleaseInstall, store.Install, error) {
	r, err := a.Store.GetReleaseByID(ctx, releaseID)
	if err != nil {
		return store.ReleaseInstall{}, store.Install{}, err
	}
	for _, ri := range r.Installs {
		if ri.InstallID == installID {
			inst, err := a.Store.GetInstall(ctx, r.OrgID, installID)
			return ri, inst, err
		}
	}
	return store.ReleaseInstall{}, store.Install{}, fmt.Errorf("install %s is not in release %s: %w", installID, releaseID, store.ErrNotFound)
}
