package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/outpost-dev/outpost/contract"
)

// SetDriftSchedule creates or updates the install's drift schedule, one
// check every interval (a check still running skips the next: overlap
// SKIP); 0 deletes it (none there is no error).
func (o *Operations) SetDriftSchedule(ctx context.Context, installID string, every time.Duration) error {
	sc := o.Client.ScheduleClient()
	id := contract.DriftScheduleID(installID)
	if every <= 0 {
		err := sc.GetHandle(ctx, id).Delete(ctx)
		var nf *serviceerror.NotFound
		if err != nil && !errors.As(err, &nf) {
			return fmt.Errorf("delete schedule %s: %w", id, err)
		}
		return nil
	}
	spec := client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: every}}}
	action := &client.ScheduleWorkflowAction{ID: contract.OperationWorkflowID(installID, contract.OpDriftCheck, ""),
		Workflow: contract.WorkflowDriftCheck, Args: []any{contract.OperationInput{InstallID: installID}}, TaskQueue: o.queue()}
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
