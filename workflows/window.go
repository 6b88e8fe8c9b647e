package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/outpost-dev/outpost/contract"
)

// AwaitMaintenanceWindow returns once the install's maintenance window is
// open: at once when one is open or the install has none, else after a
// timer until the next opens. While it waits, the operation opID (if not
// "") shows waiting_for_maintenance_window with waiting_until. It returns
// the window it found; an error only when the workflow is cancelled (or the
// store cannot be read).
func AwaitMaintenanceWindow(ctx workflow.Context, installID, opID string) (contract.Window, error) {
	var w contract.Window
	if err := runLocal(ctx, contract.NextMaintenanceWindow, installID).Get(ctx, &w); err != nil {
		return w, err
	}
	wait := w.Start.Sub(workflow.Now(ctx))
	if w.None || w.Open || wait <= 0 {
		return w, nil
	}
	if opID != "" {
		if err := runLocal(ctx, contract.SetOperationWaiting, opID, &w.Start).Get(ctx, nil); err != nil {
			return w, err
		}
	}
	if err := workflow.Sleep(ctx, wait); err != nil {
		return w, err
	}
	if opID != "" {
		var running *time.Time
		return w, runLocal(ctx, contract.SetOperationWaiting, opID, running).Get(ctx, nil)
	}
	return w, nil
}
