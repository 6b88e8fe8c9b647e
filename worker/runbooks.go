package worker

import (
	"context"
	"fmt"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/store"
)

// StartRunbookRun starts the workflow of a recorded runbook run, or of a
// resumed one again under the same ID (its previous workflow has closed).
func (o *Operations) StartRunbookRun(ctx context.Context, run store.RunbookRun) error {
	_, err := o.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       run.WorkflowID,
		TaskQueue:                o.queue(),
		WorkflowIDReusePolicy:    enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
	}, contract.WorkflowRunbookRun, contract.RunbookRunInput{RunID: run.ID})
	if err != nil {
		return fmt.Errorf("start workflow %s: %w", run.WorkflowID, err)
	}
	return nil
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
