package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/outpost-dev/outpost/activities"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// sweepStore is what the sweeper reads and writes of the store.
type sweepStore interface {
	ListUnfinishedOperations(ctx context.Context, createdBefore time.Time) ([]store.InstallOperation, error)
	AbandonOperation(ctx context.Context, opID, why string, installStatus status.Install) (bool, error)
}

// Sweeper finishes the operations whose workflow has closed without
// finishing them (its last write failed, the database away; or someone
// terminated it), so that no install stays locked: each is recorded
// failed, saying how its workflow ended.
type Sweeper struct {
	Client client.Client
	Store  sweepStore
	Logger *slog.Logger
	// Every is how often it looks (default a minute); Grace how old an
	// unfinished operation must be to be looked at (default two minutes:
	// the API records an operation before it starts its workflow).
	Every, Grace time.Duration
}

// Run sweeps every s.Every until ctx is done.
func (s *Sweeper) Run(ctx context.Context) error {
	every := s.Every
	if every <= 0 {
		every = time.Minute
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if _, err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
			s.logger().Warn("sweeping operations whose workflow closed", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Sweep finishes each unfinished operation older than the grace whose
// workflow is not running it; it returns how many it finished.
func (s *Sweeper) Sweep(ctx context.Context) (int, error) {
	grace := s.Grace
	if grace <= 0 {
		grace = 2 * time.Minute
	}
	ops, err := s.Store.ListUnfinishedOperations(ctx, time.Now().Add(-grace))
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, op := range ops {
		why, err := s.closed(ctx, op)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if why == "" {
			continue
		}
		done, err := s.Store.AbandonOperation(ctx, op.ID, why, activities.FailedInstallStatus(op.Kind))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if done {
			n++
			s.logger().Warn("finished an operation its workflow left unfinished", "operation", op.ID, "install", op.InstallID, "why", why)
		}
	}
	return n, errors.Join(errs...)
}

// closed says why op's workflow will not finish it ("" while it runs it):
// its workflow ID's latest run closed, or it runs another operation (runs
// of one ID are one after the other), or there is none.
func (s *Sweeper) closed(ctx context.Context, op store.InstallOperation) (string, error) {
	desc, err := s.Client.DescribeWorkflowExecution(ctx, op.WorkflowID, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return "the operation's workflow (" + op.WorkflowID + ") is gone without finishing it", nil
	}
	if err != nil {
		return "", fmt.Errorf("describe workflow %s: %w", op.WorkflowID, err)
	}
	info := desc.GetWorkflowExecutionInfo()
	runsOp, err := s.runsOperation(ctx, op, info.GetExecution().GetRunId())
	if err != nil {
		return "", err
	}
	st := info.GetStatus()
	switch {
	case !runsOp:
		return "the operation's workflow (" + op.WorkflowID + ") ended without finishing it", nil
	case st == enums.WORKFLOW_EXECUTION_STATUS_RUNNING:
		return "", nil
	}
	name := strings.ToLower(strings.TrimPrefix(st.String(), "WorkflowExecutionStatus"))
	return fmt.Sprintf("the operation's workflow (%s) ended (%s) without finishing it", op.WorkflowID, name), nil
}

// runsOperation says whether run runID of op's workflow ID is op's: its
// input names op (a scheduled drift check's names only the install: its ID
// is its own).
func (s *Sweeper) runsOperation(ctx context.Context, op store.InstallOperation, runID string) (bool, error) {
	it := s.Client.GetWorkflowHistory(ctx, op.WorkflowID, runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	if !it.HasNext() {
		return false, fmt.Errorf("workflow %s run %s has no history", op.WorkflowID, runID)
	}
	ev, err := it.Next()
	if err != nil {
		return false, fmt.Errorf("history of workflow %s: %w", op.WorkflowID, err)
	}
	var in contract.OperationInput
	if err := converter.GetDefaultDataConverter().FromPayloads(ev.GetWorkflowExecutionStartedEventAttributes().GetInput(), &in); err != nil {
		return false, fmt.Errorf("input of workflow %s: %w", op.WorkflowID, err)
	}
	return in.OperationID == op.ID || in.OperationID == "", nil
}

func (s *Sweeper) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.Default()
	}
	return s.Logger
}
