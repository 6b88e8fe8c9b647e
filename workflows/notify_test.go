package workflows

import (
	"context"
	"errors"
	"testing"

	"go.temporal.io/sdk/activity"

	"github.com/outpost-dev/outpost/contract"
)

func deliverEnv(t *testing.T, post func(ctx context.Context, id string) error) (finished *bool, tries *int, err error) {
	t.Helper()
	env := newEnv()
	registerActivities(env)
	env.RegisterWorkflow(DeliverNotification)
	n, end := 0, (*bool)(nil)
	env.OnActivity(contract.DeliverNotification, mockAny, "ndl_1").Return(func(ctx context.Context, id string) error {
		n++
		if got := activity.GetInfo(ctx).Attempt; int(got) != n {
			t.Errorf("try %d ran as attempt %d", n, got)
		}
		return post(ctx, id)
	})
	env.OnActivity(contract.FinishNotification, mockAny, "ndl_1", mockAny).Return(func(_ context.Context, _ string, ok bool) error {
		end = &ok
		return nil
	})
	env.ExecuteWorkflow(DeliverNotification, contract.DeliveryInput{OrgID: "org_1", DeliveryID: "ndl_1"})
	if !env.IsWorkflowCompleted() {
		t.Fatal("the delivery did not end")
	}
	return end, &n, env.GetWorkflowError()
}

// A receiver that fails twice and then answers: delivered on the third try.
func TestDeliverNotificationRetriesUntilDelivered(t *testing.T) {
	calls := 0
	end, tries, err := deliverEnv(t, func(context.Context, string) error {
		if calls++; calls < 3 {
			return errors.New("webhook answered 500 Internal Server Error")
		}
		return nil
	})
	if err != nil || *tries != 3 || end == nil || !*end {
		t.Fatalf("err %v, tries %d, finished %v; want delivered after 3 tries", err, *tries, end)
	}
}

// A receiver that never answers: failed after the policy's tries.
func TestDeliverNotificationGivesUpAfterItsAttempts(t *testing.T) {
	end, tries, err := deliverEnv(t, func(context.Context, string) error {
		return errors.New("context deadline exceeded")
	})
	if err == nil || *tries != int(contract.DeliveryRetry.Attempts) || end == nil || *end {
		t.Fatalf("err %v, tries %d, finished %v; want failed after %d tries", err, *tries, end, contract.DeliveryRetry.Attempts)
	}
}
