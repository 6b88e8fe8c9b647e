package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/outpost-dev/outpost/contract/status"
)

// ListUnfinishedExclusiveRuns lists the exclusive action runs recorded
// before createdBefore that have not finished, oldest first: each holds its
// install's lock (the worker's sweeper looks at their workflows).
func (s *Store) ListUnfinishedExclusiveRuns(ctx context.Context, createdBefore time.Time) ([]ActionRun, error) {
	runs, err := list[ActionRun](s.db.WithContext(ctx), "created_at", "exclusive AND finished_at IS NULL AND created_at < ?", createdBefore)
	if err != nil {
		return nil, fmt.Errorf("list unfinished exclusive action runs: %w", err)
	}
	return runs, nil
}

// AbandonActionRun finishes a run whose workflow ended without finishing
// it: failed with why, its steps that had started and not ended failed too
// (those pending skipped), and the install's lock it held released. One
// that has finished meanwhile is left as it is (false).
func (s *Store) AbandonActionRun(ctx context.Context, runID, why string) (bool, error) {
	return abandon(s, ctx, "action run", runID, func(tx *gorm.DB, _ ActionRun, now time.Time) error {
		if err := update(tx.Where("run_id = ? AND status NOT IN ? AND finished_at IS NULL", runID, []status.Job{ActionStepPending, ActionStepSkipped}),
			&ActionRunStep{Status: status.JobFailed, Error: why, FinishedAt: &now}, "Status", "Error", "FinishedAt").Error; err != nil {
			return err
		}
		if err := update(tx.Where("run_id = ? AND status = ?", runID, ActionStepPending), &ActionRunStep{Status: ActionStepSkipped}, "Status").Error; err != nil {
			return err
		}
		if err := update(tx.Where("id = ?", runID), &ActionRun{Status: status.JobFailed, Error: why, FinishedAt: &now},
			"Status", "Error", "FinishedAt").Error; err != nil {
			return err
		}
		return unlockInstall(tx, runID)
	})
}
