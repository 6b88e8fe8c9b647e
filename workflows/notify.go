package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/outpost-dev/outpost/contract"
)

// DeliverNotification POSTs one event to one subscription, retried with
// exponential backoff (contract.DeliveryRetry), and records whether it was
// delivered. Each try records itself (the activity).
func DeliverNotification(ctx workflow.Context, in contract.DeliveryInput) error {
	r := contract.DeliveryRetry
	post := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: r.Initial, BackoffCoefficient: 2,
			MaximumInterval: r.MaxGap, MaximumAttempts: r.Attempts},
	})
	err := call(post, contract.DeliverNotification, in.DeliveryID).Get(ctx, nil)
	if ferr := record(ctx, nil, contract.FinishNotification, in.DeliveryID, err == nil); ferr != nil {
		return ferr
	}
	return err
}
