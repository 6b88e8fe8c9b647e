package worker

import (
	"context"

	"github.com/outpost-dev/outpost/contract"
)

// StartDelivery starts a notification delivery's workflow. Its ID names the
// delivery, so a second start (a retried emit) is refused, and that is not
// an error.
func (o *Operations) StartDelivery(ctx context.Context, orgID, deliveryID string) error {
	return o.start(ctx, contract.NotifyWorkflowID(orgID, deliveryID), idNamesWork,
		contract.WorkflowDeliverNotification, contract.DeliveryInput{OrgID: orgID, DeliveryID: deliveryID})
}
