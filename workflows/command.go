package workflows

import (
	"encoding/json"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/protocol"
)

// InstallCommand runs a debug command on the install's runner and records
// its exit code and output.
func InstallCommand(ctx workflow.Context, in contract.InstallCommandInput) (contract.InstallCommandResult, error) {
	key := workflow.GetInfo(ctx).WorkflowExecution.ID + "/job"
	res, err := RunJob(ctx, func(c workflow.Context) workflow.Future {
		return call(c, contract.EnqueueCommandJob, in.CommandID, key)
	}, JobPolicy{MaxAttempts: 3, Wait: time.Duration(in.TimeoutMS)*time.Millisecond + 15*time.Minute, WithOutputs: true})
	out := contract.InstallCommandResult{CommandID: in.CommandID, JobID: res.JobID, Attempts: res.Attempt,
		CommandResult: commandResultOf(res)}
	if err != nil {
		out.Status, out.Error = failure(ctx, err)
	}
	if ferr := record(ctx, nil, contract.FinishCommand, in.CommandID, out.CommandResult); ferr != nil && err == nil {
		err = ferr
	}
	return out, err
}

// commandResultOf reads a command job's outputs.
func commandResultOf(r contract.JobResult) contract.CommandResult {
	res := contract.CommandResult{Status: r.Status, ExitCode: r.ExitCode, Error: r.Error}
	var out protocol.CommandOutputs
	if len(r.Outputs) > 0 && json.Unmarshal(r.Outputs, &out) == nil {
		res.Output, res.OutputTruncated = out.Output, out.OutputTruncated
		if res.ExitCode == nil {
			res.ExitCode = &out.ExitCode
		}
	}
	return res
}
