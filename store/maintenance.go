package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/outpost-dev/outpost/maintenance"
	"github.com/outpost-dev/outpost/status"
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
	return s.updateInstall(ctx, orgID, installID, map[string]any{"maintenance_windows": mustJSON(ws)})
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
	changes := map[string]any{"status": status.OpRunning, "waiting_until": nil}
	if until != nil {
		changes = map[string]any{"status": status.OpWaitingForWindow, "waiting_until": until.UTC()}
	}
	return s.db.WithContext(ctx).Model(&InstallOperation{}).Where("id = ?", opID).Updates(changes).Error
}

// updateInstall applies changes to one of the org's installs.
func (s *Store) updateInstall(ctx context.Context, orgID, installID string, changes map[string]any) error {
	res := s.db.WithContext(ctx).Model(&Install{}).Where("org_id = ? AND id = ?", orgID, installID).Updates(changes)
	if res.Error != nil {
		return fmt.Errorf("update install %s: %w", installID, res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("install %s: %w", installID, ErrNotFound)
	}
	return nil
}
