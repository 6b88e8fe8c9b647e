package worker

import (
	"context"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/internal/schedules"
)

// SetDriftSchedule creates or updates the install's drift schedule, one
// check every interval (a check still running skips the next: overlap
// SKIP); 0 deletes it (none there is no error).
func (o *Operations) SetDriftSchedule(ctx context.Context, installID string, every time.Duration) error {
	sc := o.Client.ScheduleClient()
	id := contract.DriftScheduleID(installID)
	if every <= 0 {
		return schedules.Delete(ctx, sc, id)
	}
	spec := client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: every}}}
	action := &client.ScheduleWorkflowAction{ID: contract.OperationWorkflowID(installID, contract.OpDriftCheck, ""),
		Workflow: contract.WorkflowDriftCheck, Args: []any{contract.OperationInput{InstallID: installID}}, TaskQueue: o.queue()}
	return schedules.Put(ctx, sc, id, spec, action)
}
