package workflows

import (
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
)

// Workflows call activities by their contract names: they link none of the
// activities' implementation. Temporal checks a call by name against
// nothing, so each is checked against the contract's signature first, and
// one that does not fit fails at once, naming the activity (a workflow
// bug: not retried).

// call runs activity name with ctx's activity options.
func call(ctx workflow.Context, name string, args ...any) workflow.Future {
	if err := contract.CheckArgs(name, args...); err != nil {
		return failed(ctx, err)
	}
	return workflow.ExecuteActivity(ctx, name, args...)
}

// callLocal runs activity name as a local activity with ctx's local
// activity options.
func callLocal(ctx workflow.Context, name string, args ...any) workflow.Future {
	if err := contract.CheckArgs(name, args...); err != nil {
		return failed(ctx, err)
	}
	return workflow.ExecuteLocalActivity(ctx, name, args...)
}

// record calls activity name (a record of how something ended) with args,
// on a context disconnected from ctx, so that the end is recorded even when
// the workflow is cancelled; its result goes to valuePtr (nil: none).
func record(ctx workflow.Context, valuePtr any, name string, args ...any) error {
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	return call(shortActivity(dctx), name, args...).Get(dctx, valuePtr)
}

// endRun records how a run ended (finish: its activity): st with msg, or
// cancelled when ctx is. It returns what it recorded, and err, or the
// record's error when err is nil.
func endRun(ctx workflow.Context, finish, runID string, st status.Job, msg string, err error) (status.Job, string, error) {
	if ctx.Err() != nil {
		st, msg = status.JobCancelled, "cancelled"
	}
	if ferr := record(ctx, nil, finish, runID, st, msg); ferr != nil && err == nil {
		err = ferr
	}
	return st, msg, err
}

// failure is how a run or step that failed with err ends: failed with err's
// message, or cancelled when ctx is.
func failure(ctx workflow.Context, err error) (status.Job, string) {
	if ctx.Err() != nil {
		return status.JobCancelled, "cancelled"
	}
	return status.JobFailed, err.Error()
}

// runLocal runs one of the quick store activities as a local activity.
func runLocal(ctx workflow.Context, name string, args ...any) workflow.Future {
	return callLocal(localActivity(ctx), name, args...)
}

func failed(ctx workflow.Context, err error) workflow.Future {
	f, s := workflow.NewFuture(ctx)
	s.SetError(temporal.NewNonRetryableApplicationError(err.Error(), "ContractMismatch", err))
	return f
}
