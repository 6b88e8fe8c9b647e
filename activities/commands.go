package activities

import (
	"context"
	"time"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// commandStore is what the debug command activities read and write of the
// store.
type commandStore interface {
	GetInstallCommandByID(ctx context.Context, id string) (store.InstallCommand, error)
	UpdateInstallCommand(ctx context.Context, c store.InstallCommand) error
}

// Commands are the activities of a debug command: its job, and its outcome.
type Commands struct {
	store commandStore
	queue *jobQueue
}

// EnqueueCommandJob renders the debug command's manifest from the store and
// queues it on the install's runner; idempotent by key.
func (a *Commands) EnqueueCommandJob(ctx context.Context, commandID, key string) (contract.JobRef, error) {
	cmd, err := a.store.GetInstallCommandByID(ctx, commandID)
	if err != nil {
		return contract.JobRef{}, err
	}
	m := protocol.CommandManifest{Args: cmd.Args, MaxOutputBytes: 64 << 10}
	ref, err := a.queue.enqueueManifest(ctx, key, cmd.InstallID, protocol.JobTypeCommand, m, time.Duration(cmd.TimeoutMS)*time.Millisecond)
	if err != nil {
		return contract.JobRef{}, err
	}
	cmd.JobID, cmd.Status = &ref.JobID, status.JobRunning
	return ref, a.store.UpdateInstallCommand(ctx, cmd)
}

// FinishCommand records the command's outcome for the API.
func (a *Commands) FinishCommand(ctx context.Context, commandID string, res contract.CommandResult) error {
	cmd, err := a.store.GetInstallCommandByID(ctx, commandID)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	cmd.Status, cmd.ExitCode, cmd.Output, cmd.Error, cmd.FinishedAt = res.Status, res.ExitCode, res.Output, res.Error, &now
	return a.store.UpdateInstallCommand(ctx, cmd)
}
