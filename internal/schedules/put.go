package schedules

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// Put creates the schedule id, or updates an existing one to spec and
// action. A run still going skips the next (overlap SKIP).
func Put(ctx context.Context, sc client.ScheduleClient, id string, spec client.ScheduleSpec, action *client.ScheduleWorkflowAction) error {
	_, err := sc.Create(ctx, client.ScheduleOptions{ID: id, Spec: spec, Action: action,
		Overlap: enums.SCHEDULE_OVERLAP_POLICY_SKIP})
	if errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		err = sc.GetHandle(ctx, id).Update(ctx, client.ScheduleUpdateOptions{
			DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
				s := in.Description.Schedule
				s.Spec, s.Action = &spec, action
				return &client.ScheduleUpdate{Schedule: &s}, nil
			}})
	}
	if err != nil {
		return fmt.Errorf("set schedule %s: %w", id, err)
	}
	return nil
}

// Delete deletes the schedule id; one that is not there is no error.
func Delete(ctx context.Context, sc client.ScheduleClient, id string) error {
	err := sc.GetHandle(ctx, id).Delete(ctx)
	var nf *serviceerror.NotFound
	if err != nil && !errors.As(err, &nf) {
		return fmt.Errorf("delete schedule %s: %w", id, err)
	}
	return nil
}
