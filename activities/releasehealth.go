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

// ReleaseBatchHealth reads the health of a release's installs (a batch's),
// in the order asked: each install's health as the API shows it (unknown
// while its runner is offline).
func (a *Releases) ReleaseBatchHealth(ctx context.Context, releaseID string, installIDs []string) ([]contract.InstallHealth, error) {
	r, err := a.store.GetReleaseByID(ctx, releaseID)
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	for _, ri := range r.Installs {
		names[ri.InstallID] = ri.InstallName
	}
	health, err := a.store.HealthOfInstalls(ctx, installIDs, time.Now(), a.onlineWindow)
	if err != nil {
		return nil, err
	}
	out := make([]contract.InstallHealth, len(installIDs))
	for i, id := range installIDs {
		h := health[id]
		out[i] = contract.InstallHealth{InstallID: id, InstallName: names[id], State: h.State,
			Component: h.Component, Object: h.Object, Condition: h.Condition}
	}
	return out, nil
}

// MarkReleaseInstallUnhealthy records that an install failed its batch's
// health gate, and why.
func (a *Releases) MarkReleaseInstallUnhealthy(ctx context.Context, releaseID, installID, why string) error {
	return a.store.UpdateReleaseInstall(ctx, releaseID, installID,
		store.ReleaseInstallChange{Status: status.ReleaseInstallUnhealthy, Error: &why})
}

// BeginReleaseRollback starts the deploy_config operation that brings an
// install of a batch that failed its health gate back to the version it ran
// before the release. An install the release did not deploy, or that ran no
// version before, is not rolled back (Failed says why); so is one busy with
// another operation.
func (a *Releases) BeginReleaseRollback(ctx context.Context, releaseID, installID string) (contract.ReleaseDeploy, error) {
	ri, inst, err := a.releaseInstall(ctx, releaseID, installID)
	if err != nil {
		return contract.ReleaseDeploy{}, err
	}
	switch {
	case ri.OperationID == "":
		return contract.ReleaseDeploy{Failed: fmt.Sprintf("install %s not rolled back: the release did not deploy it", inst.Name)}, nil
	case ri.FromVersion == 0:
		return contract.ReleaseDeploy{Failed: fmt.Sprintf("install %s not rolled back: it ran no config version before the release", inst.Name)}, nil
	}
	op, err := a.store.StartOperation(ctx, store.InstallOperation{OrgID: inst.OrgID, InstallID: inst.ID,
		Kind: contract.OpDeployConfig, ConfigVersion: ri.FromVersion, ApprovalMode: inst.ApprovalMode,
		WorkflowID: contract.OperationWorkflowID(inst.ID, contract.OpDeployConfig, "")})
	if errors.Is(err, store.ErrConflict) {
		return contract.ReleaseDeploy{Failed: fmt.Sprintf("install %s not rolled back: %v", inst.Name, errors.Unwrap(err))}, nil
	}
	if err != nil {
		return contract.ReleaseDeploy{}, err
	}
	return contract.ReleaseDeploy{OperationID: op.ID, WorkflowID: op.WorkflowID}, a.store.UpdateReleaseInstall(ctx, releaseID, installID,
		store.ReleaseInstallChange{Status: ri.Status, RollbackOperationID: &op.ID})
}

// FinishReleaseRollback records how an install's rollback operation ended:
// rolled_back, or failed with why (returned; "" when it succeeded). An
// operation whose workflow never started (startErr) is recorded failed
// first.
func (a *Releases) FinishReleaseRollback(ctx context.Context, releaseID, installID, opID, startErr string) (string, error) {
	return a.finishOperation(ctx, releaseID, installID, opID, startErr, "rollback operation",
		store.ReleaseInstallChange{Status: status.ReleaseInstallRolledBack})
}
