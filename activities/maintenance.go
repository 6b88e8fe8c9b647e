package activities

import (
	"context"
	"time"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/maintenance"
)

// maintenanceStore is what the maintenance window activities read and write
// of the store.
type maintenanceStore interface {
	NextMaintenanceWindow(ctx context.Context, installID string, now time.Time) (maintenance.Slot, bool, error)
	SetOperationWaiting(ctx context.Context, opID string, until *time.Time) error
}

// Maintenance are the activities of an install's maintenance windows: a
// workflow waits for one with a timer (workflows.AwaitMaintenanceWindow).
type Maintenance struct {
	store maintenanceStore
}

// NextMaintenanceWindow reads the install's windows and says whether one is
// open now, or when the next opens (a local activity).
func (a *Maintenance) NextMaintenanceWindow(ctx context.Context, installID string) (contract.Window, error) {
	now := time.Now()
	slot, ok, err := a.store.NextMaintenanceWindow(ctx, installID, now)
	if err != nil || !ok {
		return contract.Window{None: true}, err
	}
	return contract.Window{Open: !now.Before(slot.Start), Start: slot.Start.UTC(), End: slot.End.UTC()}, nil
}

// SetOperationWaiting shows an operation waiting for a maintenance window
// until (nil: it runs now).
func (a *Maintenance) SetOperationWaiting(ctx context.Context, opID string, until *time.Time) error {
	return a.store.SetOperationWaiting(ctx, opID, until)
}
