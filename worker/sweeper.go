package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
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
	ListUnfinishedExclusiveRuns(ctx context.Context, createdBefore time.Time) ([]store.ActionRun, error)
	AbandonActionRun(ctx context.Context, runID, why string) (bool, error)
}

// Sweeper finishes the operations and exclusive action runs whose workflow
// has closed without finishing them (its last write failed, the database
// away; or someone terminated it), so that no install stays locked: each is
// recorded failed, saying how its workflow ended.
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
	return loop(ctx, orDefault(s.Every, time.Minute), func() {
		_, err := s.Sweep(ctx)
		warn(ctx, s.Logger, "sweeping operations whose workflow closed", err)
	})
}

// Sweep finishes each unfinished operation and exclusive action run older
// than the grace whose workflow is not running it; it returns how many it
// finished.
func (s *Sweeper) Sweep(ctx context.Context) (int, error) {
	grace := s.Grace
	if grace <= 0 {
		grace = 2 * time.Minute
	}
	before := time.Now().Add(-grace)
	ops, err := s.Store.ListUnfinishedOperations(ctx, before)
	if err != nil {
		return 0, err
	}
	runs, err := s.Store.ListUnfinishedExclusiveRuns(ctx, before)
	if err != nil {
		return 0, err
	}
	var left []unfinished
	for _, op := range ops {
		left = append(left, unfinished{what: "operation", id: op.ID, installID: op.InstallID, workflowID: op.WorkflowID,
			runs: func(p *commonpb.Payloads) (bool, error) {
				var in contract.OperationInput
				err := converter.GetDefaultDataConverter().FromPayloads(p, &in)
				return in.OperationID == op.ID || in.OperationID == "", err // a scheduled drift check's names only the install: its ID is its own
			},
			abandon: func(ctx context.Context, why string) (bool, error) {
				return s.Store.AbandonOperation(ctx, op.ID, why, activities.FailedInstallStatus(op.Kind))
			}})
	}
	for _, run := range runs {
		left = append(left, unfinished{what: "action run", id: run.ID, installID: run.InstallID, workflowID: run.WorkflowID,
			runs: func(p *commonpb.Payloads) (bool, error) {
				var in contract.ActionRunInput
				err := converter.GetDefaultDataConverter().FromPayloads(p, &in)
				return in.RunID == run.ID || in.RunID == "", err // a schedule's run records itself: its ID is its own
			},
			abandon: func(ctx context.Context, why string) (bool, error) { return s.Store.AbandonActionRun(ctx, run.ID, why) }})
	}
	n := 0
	var errs []error
	for _, u := range left {
		done, err := s.sweepOne(ctx, u)
		if err != nil {
			errs = append(errs, err)
		}
		if done {
			n++
		}
	}
	return n, errors.Join(errs...)
}

// unfinished is an operation or exclusive action run the store has not
// seen finish: its workflow, whether a run of that workflow runs it (given
// its input), and how to finish it.
type unfinished struct {
	what, id, installID, workflowID string
	runs                            func(input *commonpb.Payloads) (bool, error)
	abandon                         func(ctx context.Context, why string) (bool, error)
}

// sweepOne finishes u if its workflow will not; true when it did.
func (s *Sweeper) sweepOne(ctx context.Context, u unfinished) (bool, error) {
	why, err := s.closed(ctx, u)
	if err != nil || why == "" {
		return false, err
	}
	done, err := u.abandon(ctx, why)
	if err != nil || !done {
		return false, err
	}
	orDefaultLogger(s.Logger).Warn("finished an "+u.what+" its workflow left unfinished", u.what, u.id, "install", u.installID, "why", why)
	return true, nil
}

// closed says why u's workflow will not finish it ("" while it runs it):
// its workflow ID's latest run closed, or it runs another operation or run
// (runs of one ID are one after the other), or there is none.
func (s *Sweeper) closed(ctx context.Context, u unfinished) (string, error) {
	desc, err := s.Client.DescribeWorkflowExecution(ctx, u.workflowID, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return "the " + u.what + "'s workflow (" + u.workflowID + ") is gone without finishing it", nil
	}
	if err != nil {
		return "", fmt.Errorf("describe workflow %s: %w", u.workflowID, err)
	}
	info := desc.GetWorkflowExecutionInfo()
	runsIt, err := s.runsIt(ctx, u, info.GetExecution().GetRunId())
	if err != nil {
		return "", err
	}
	st := info.GetStatus()
	switch {
	case !runsIt:
		return "the " + u.what + "'s workflow (" + u.workflowID + ") ended without finishing it", nil
	case st == enums.WORKFLOW_EXECUTION_STATUS_RUNNING:
		return "", nil
	}
	name := strings.ToLower(strings.TrimPrefix(st.String(), "WorkflowExecutionStatus"))
	return fmt.Sprintf("the %s's workflow (%s) ended (%s) without finishing it", u.what, u.workflowID, name), nil
}

// runsIt says whether run runID of u's workflow ID is u's, by its input.
func (s *Sweeper) runsIt(ctx context.Context, u unfinished, runID string) (bool, error) {
	it := s.Client.GetWorkflowHistory(ctx, u.workflowID, runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	if !it.HasNext() {
		return false, fmt.Errorf("workflow %s run %s has no history", u.workflowID, runID)
	}
	ev, err := it.Next()
	if err != nil {
		return false, fmt.Errorf("history of workflow %s: %w", u.workflowID, err)
	}
	ok, err := u.runs(ev.GetWorkflowExecutionStartedEventAttributes().GetInput())
	if err != nil {
		return false, fmt.Errorf("input of workflow %s: %w", u.workflowID, err)
	}
	return ok, nil
}
