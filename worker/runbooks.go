package worker

import (
	"context"
	"fmt"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/store"
)

// StartRunbookRun starts the workflow of a recorded runbook run, or of a
// resumed one again under the same ID (its previous workflow has closed).
func (o *Operations) StartRunbookRun(ctx context.Context, run store.RunbookRun) error {
	return o.start(ctx, run.WorkflowID, idReused, contract.WorkflowRunbookRun, contract.RunbookRunInput{RunID: run.ID})
}

// SignalRunbookApproval tells a runbook run that its gate (step) was
// approved.
func (o *Operations) SignalRunbookApproval(ctx context.Context, workflowID string, step int) error {
	err := o.Client.SignalWorkflow(ctx, workflowID, "", contract.RunbookApproveSignal, contract.RunbookApproval{Step: step})
	if err != nil {
		return fmt.Errorf("signal %s: %w", workflowID, err)
	}
	return nil
}
