package worker

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/outpost-dev/outpost/contract"
)

// StartDelivery starts a notification delivery's workflow. Its ID names the
// delivery, so a second start (a retried emit) is refused, and that is not
// an error.
func (o *Operations) StartDelivery(ctx context.Context, orgID, deliveryID string) error {
	id := contract.NotifyWorkflowID(orgID, deliveryID)
	_, err := o.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       id,
		TaskQueue:                o.queue(),
		WorkflowIDReusePolicy:    enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}, contract.WorkflowDeliverNotification, contract.DeliveryInput{OrgID: orgID, DeliveryID: deliveryID})
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if err != nil && !errors.As(err, &started) {
		return fmt.Errorf("start workflow %s: %w", id, err)
	}
	return nil
}
