package activities

import (
	"context"
	"time"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
)

// EnqueueCommandJob renders the debug command's manifest from the store and
// queues it on the install's runner; idempotent by key.
func (a *Activities) EnqueueCommandJob(ctx context.Context, commandID, key string) (_ contract.JobRef, err error) {
	defer classified(&err)
	cmd, err := a.Store.GetInstallCommandByID(ctx, commandID)
	if err != nil {
		return contract.JobRef{}, err
	}
	m, err := manifest(protocol.CommandManifest{Args: cmd.Args, MaxOutputBytes: 64 << 10})
	if err != nil {
		return contract.JobRef{}, err
	}
	ref, err := a.EnqueueJob(ctx, contract.EnqueueJobInput{Key: key, InstallID: cmd.InstallID, Type: protocol.JobTypeCommand,
		Manifest: m, TimeoutMS: cmd.TimeoutMS})
	if err != nil {
		return contract.JobRef{}, err
	}
	cmd.JobID, cmd.Status = &ref.JobID, status.JobRunning
	return ref, a.Store.UpdateInstallCommand(ctx, cmd)
}

// FinishCommand records the command's outcome for the API.
func (a *Activities) FinishCommand(ctx context.Context, commandID string, res contract.CommandResult) (err error) {
	defer classified(&err)
	cmd, err := a.Store.GetInstallCommandByID(ctx, commandID)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	cmd.Status, cmd.ExitCode, cmd.Output, cmd.Error, cmd.FinishedAt = res.Status, res.ExitCode, res.Output, res.Error, &now
	return a.Store.UpdateInstallCommand(ctx, cmd)
}
