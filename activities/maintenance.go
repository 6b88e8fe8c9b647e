package activities

import (
	"context"
	"time"

	"github.com/outpost-dev/outpost/contract"
)

// NextMaintenanceWindow reads the install's windows and says whether one is
// open now, or when the next opens (a local activity: a workflow then waits
// with a timer, see workflows.AwaitMaintenanceWindow).
func (a *Activities) NextMaintenanceWindow(ctx context.Context, installID string) (_ contract.Window, err error) {
	defer classified(&err)
	now := time.Now()
	slot, ok, err := a.Store.NextMaintenanceWindow(ctx, installID, now)
	if err != nil || !ok {
		return contract.Window{None: true}, err
	}
	return contract.Window{Open: !now.Before(slot.Start), Start: slot.Start.UTC(), End: slot.End.UTC()}, nil
}

// SetOperationWaiting shows an operation waiting for a maintenance window
// until (nil: it runs now).
func (a *Activities) SetOperationWaiting(ctx context.Context, opID string, until *time.Time) (err error) {
	defer classified(&err)
	return a.Store.SetOperationWaiting(ctx, opID, until)
}
