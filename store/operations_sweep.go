package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/outpost-dev/outpost/contract/status"
)

// ListUnfinishedOperations lists the operations recorded before createdBefore
// that have not finished, oldest first (the worker's sweeper looks at their
// workflows).
func (s *Store) ListUnfinishedOperations(ctx context.Context, createdBefore time.Time) ([]InstallOperation, error) {
	var ops []InstallOperation
	err := s.db.WithContext(ctx).Where("finished_at IS NULL AND created_at < ?", createdBefore).
		Order("created_at").Find(&ops).Error
	if err != nil {
		return nil, fmt.Errorf("list unfinished operations: %w", err)
	}
	return ops, nil
}

// AbandonOperation finishes an operation whose workflow ended without
// finishing it: failed with why, its steps that had started and not ended
// failed too (those pending skipped), the install given installStatus ("" leaves it) and freed. One
// that has finished meanwhile is left as it is (false).
func (s *Store) AbandonOperation(ctx context.Context, opID, why string, installStatus status.Install) (bool, error) {
	return abandon(s, ctx, "operation", opID, func(tx *gorm.DB, op InstallOperation, now time.Time) error {
		if err := update(tx.Where("operation_id = ? AND status <> ? AND finished_at IS NULL", opID, status.StepPending),
			&InstallStep{Status: status.StepFailed, Error: why, FinishedAt: &now}, "Status", "Error", "FinishedAt").Error; err != nil {
			return err
		}
		return s.finishOperation(tx, op, status.OpFailed, why, installStatus)
	})
}

// abandon finishes, in a transaction, the row of T of id (what: "operation")
// with finish, unless it has finished meanwhile (false).
func abandon[T any](s *Store, ctx context.Context, what, id string, finish func(tx *gorm.DB, row T, now time.Time) error) (bool, error) {
	done := false
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		row, found, err := lockUnfinished[T](tx, s.dialect, id)
		if !found || err != nil {
			return err
		}
		if err := finish(tx, row, s.now()); err != nil {
			return err
		}
		done = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("abandon %s %s: %w", what, id, err)
	}
	return done, nil
}

// lockUnfinished reads the row of id not yet finished (finished_at NULL),
// locked for the transaction on PostgreSQL; found is false when there is
// none (finished meanwhile, or gone).
func lockUnfinished[T any](tx *gorm.DB, dialect, id string) (row T, found bool, err error) {
	q := tx.Where("id = ? AND finished_at IS NULL", id)
	if dialect == Postgres {
		q = q.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	if err := q.First(&row).Error; errors.Is(err, gorm.ErrRecordNotFound) {
		return row, false, nil
	} else if err != nil {
		return row, false, err
	}
	return row, true, nil
}
