package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/maintenance"
)

// SetMaintenanceWindows replaces an install's maintenance windows (none:
// work may run at any time). A window that cannot work is a FieldError.
func (s *Store) SetMaintenanceWindows(ctx context.Context, orgID, installID string, ws []maintenance.Window) error {
	if err := maintenance.Validate(ws); err != nil {
		var fe *maintenance.FieldError
		if errors.As(err, &fe) {
			return fieldErr(fe.Field, "%s", fe.Message)
		}
		return err
	}
	if ws == nil {
		ws = []maintenance.Window{}
	}
	return s.updateInstall(ctx, orgID, installID, &Install{MaintenanceWindows: ws}, "MaintenanceWindows")
}

// NextMaintenanceWindow is the install's window open at now, or its next
// one; ok is false when the install has none.
func (s *Store) NextMaintenanceWindow(ctx context.Context, installID string, now time.Time) (maintenance.Slot, bool, error) {
	inst, err := first[Install](s.db.WithContext(ctx), "install "+installID, "id = ?", installID)
	if err != nil {
		return maintenance.Slot{}, false, err
	}
	slot, ok := maintenance.Next(inst.MaintenanceWindows, now)
	return slot, ok, nil
}

// SetOperationWaiting shows an operation waiting for a maintenance window
// until (nil: it waits no more, it runs).
func (s *Store) SetOperationWaiting(ctx context.Context, opID string, until *time.Time) error {
	row := InstallOperation{Status: status.OpRunning}
	if until != nil {
		row.Status, row.WaitingUntil = status.OpWaitingForWindow, new(until.UTC())
	}
	return update(s.db.WithContext(ctx).Where("id = ?", opID), &row, "Status", "WaitingUntil").Error
}

// updateInstall writes the fields of row named by fields to one of the
// org's installs.
func (s *Store) updateInstall(ctx context.Context, orgID, installID string, row *Install, fields ...string) error {
	res := update(s.db.WithContext(ctx).Where("org_id = ? AND id = ?", orgID, installID), row, fields...)
	if res.Error != nil {
		return fmt.Errorf("update install %s: %w", installID, res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("install %s: %w", installID, ErrNotFound)
	}
	return nil
}
