package activities

import (
	"context"
	"encoding/json"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
)

// EnqueueCommandJob renders the debug command's manifest from the store and
// queues it on the install's runner; idempotent by key.
func (a *Activities) EnqueueCommandJob(ctx context.Context, commandID, key string) (_ JobRef, err error) {
	defer classified(&err)
	cmd, err := a.Store.GetInstallCommandByID(ctx, commandID)
	if err != nil {
		return JobRef{}, err
	}
	m, err := manifest(protocol.CommandManifest{Args: cmd.Args, MaxOutputBytes: 64 << 10})
	if err != nil {
		return JobRef{}, err
	}
	ref, err := a.EnqueueJob(ctx, EnqueueJobInput{Key: key, InstallID: cmd.InstallID, Type: protocol.JobTypeCommand,
		Manifest: m, TimeoutMS: cmd.TimeoutMS})
	if err != nil {
		return JobRef{}, err
	}
	cmd.JobID, cmd.Status = &ref.JobID, status.JobRunning
	return ref, a.Store.UpdateInstallCommand(ctx, cmd)
}

// CommandResult is what a debug command produced.
type CommandResult struct {
	Status          status.Job
	ExitCode        *int
	Output          string
	OutputTruncated bool
	Error           string
}

// FinishCommand records the command's outcome for the API.
func (a *Activities) FinishCommand(ctx context.Context, commandID string, res CommandResult) (err error) {
	defer classified(&err)
	cmd, err := a.Store.GetInstallCommandByID(ctx, commandID)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	cmd.Status, cmd.ExitCode, cmd.Output, cmd.Error, cmd.FinishedAt = res.Status, res.ExitCode, res.Output, res.Error, &now
	return a.Store.UpdateInstallCommand(ctx, cmd)
}

// CommandResultOf reads a command job's outputs.
func CommandResultOf(r JobResult) CommandResult {
	res := CommandResult{Status: r.Status, ExitCode: r.ExitCode, Error: r.Error}
	var out protocol.CommandOutputs
	if len(r.Outputs) > 0 && json.Unmarshal(r.Outputs, &out) == nil {
		res.Output, res.OutputTruncated = out.Output, out.OutputTruncated
		if res.ExitCode == nil {
			res.ExitCode = &out.ExitCode
		}
	}
	return res
}
