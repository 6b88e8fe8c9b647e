package store

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"github.com/outpost-dev/outpost/contract/status"
)

// CreateActionRun records a run, queued, with its steps pending. An
// exclusive run takes the install's lock as an operation does: an install
// another operation or exclusive run holds is ErrConflict, and nothing is
// recorded.
func (s *Store) CreateActionRun(ctx context.Context, r ActionRun, steps []string) (ActionRun, error) {
	var lock func(tx *gorm.DB) error
	if r.Exclusive {
		lock = func(tx *gorm.DB) error {
			var inst Install
			if err := tx.Where("id = ?", r.InstallID).First(&inst).Error; err != nil {
				return notFound(err, "install "+r.InstallID)
			}
			return s.lockInstall(tx, inst, r.ID)
		}
	}
	err := createRun(s, ctx, "action run", "act", &r, r.head(), func(runID string) []ActionRunStep {
		rows := make([]ActionRunStep, len(steps))
		for i, name := range steps {
			rows[i] = ActionRunStep{RunID: runID, StepIndex: i, Name: name, Status: ActionStepPending, Outputs: map[string]string{}}
		}
		return rows
	}, lock)
	if err != nil {
		return ActionRun{}, err
	}
	return r, nil
}

// GetActionRun reads one of an org's action runs.
func (s *Store) GetActionRun(ctx context.Context, orgID, id string) (ActionRun, error) {
	return first[ActionRun](s.db.WithContext(ctx), "action run "+id, "org_id = ? AND id = ?", orgID, id)
}

// GetActionRunByID reads a run for the workflow that runs it.
func (s *Store) GetActionRunByID(ctx context.Context, id string) (ActionRun, error) {
	return first[ActionRun](s.db.WithContext(ctx), "action run "+id, "id = ?", id)
}

// ListActionRuns lists the runs of an install's action, newest first.
func (s *Store) ListActionRuns(ctx context.Context, orgID, installID, action string, limit int) ([]ActionRun, error) {
	return list[ActionRun](s.db.WithContext(ctx).Limit(limit), "created_at DESC, id DESC",
		"org_id = ? AND install_id = ? AND action = ?", orgID, installID, action)
}

// ListActionRunSteps lists a run's steps in order.
func (s *Store) ListActionRunSteps(ctx context.Context, runID string) ([]ActionRunStep, error) {
	return list[ActionRunStep](s.db.WithContext(ctx), "step_index", "run_id = ?", runID)
}

// StartActionRunStep records a step's job: the step and its run are running.
func (s *Store) StartActionRunStep(ctx context.Context, runID string, index int, jobID string) error {
	now := s.now()
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		step := ActionRunStep{JobID: &jobID, Status: status.JobRunning, StartedAt: &now}
		q := update(tx.Where("run_id = ? AND step_index = ?", runID, index), &step, "JobID", "Status", "StartedAt")
		if q.Error != nil {
			return q.Error
		}
		if q.RowsAffected == 0 {
			return notFound(gorm.ErrRecordNotFound, fmt.Sprintf("step %d of action run %s", index, runID))
		}
		run := ActionRun{Status: status.JobRunning}
		return update(tx.Where("id = ? AND status = ?", runID, status.JobQueued), &run, "Status").Error
	})
	if err != nil {
		return fmt.Errorf("start step %d of action run %s: %w", index, runID, err)
	}
	return nil
}

// FinishActionRunStep records how a step ended: its status, exit code,
// outputs (the sensitive ones sealed with the install's key) and error.
func (s *Store) FinishActionRunStep(ctx context.Context, step ActionRunStep) error {
	db := s.db.WithContext(ctx)
	run, err := first[ActionRun](db.Select("id", "install_id"), "action run "+step.RunID, "id = ?", step.RunID)
	if err != nil {
		return fmt.Errorf("finish step %d of action run %s: %w", step.StepIndex, step.RunID, err)
	}
	now := s.now()
	row := ActionRunStep{RunID: step.RunID, StepIndex: step.StepIndex, Status: step.Status, ExitCode: step.ExitCode,
		Outputs: step.Outputs, Error: step.Error, FinishedAt: &now}
	if row.Outputs == nil {
		row.Outputs = map[string]string{}
	}
	if row.SealedOutputs, err = sealMap(db, run.InstallID, row.place(), step.SensitiveOutputs); err != nil {
		return fmt.Errorf("finish step %d of action run %s: %w", step.StepIndex, step.RunID, err)
	}
	err = update(db.Where("run_id = ? AND step_index = ?", step.RunID, step.StepIndex), &row,
		"Status", "ExitCode", "Outputs", "SealedOutputs", "Error", "FinishedAt").Error
	if err != nil {
		return fmt.Errorf("finish step %d of action run %s: %w", step.StepIndex, step.RunID, err)
	}
	return nil
}

// FinishActionRun records how a run ended; its steps still pending are
// skipped, and the install's lock it held (an exclusive run) is released.
func (s *Store) FinishActionRun(ctx context.Context, runID string, st status.Job, why string) error {
	now := s.now()
	return finishRun(s, ctx, "action run", runID, &ActionRun{Status: st, Error: why, FinishedAt: &now}, &ActionRunStep{Status: ActionStepSkipped},
		func(tx *gorm.DB) error { return unlockInstall(tx, runID) })
}

// ActionRunDone reports whether a run will not change any more.
func ActionRunDone(r ActionRun) bool { return r.FinishedAt != nil }

// FindActionRunByWorkflow reads the run a workflow recorded, if any (a
// schedule's run records itself: a retried activity finds it).
func (s *Store) FindActionRunByWorkflow(ctx context.Context, workflowID string) (ActionRun, bool, error) {
	runs, err := list[ActionRun](s.db.WithContext(ctx).Limit(1), "created_at", "workflow_id = ?", workflowID)
	if err != nil || len(runs) == 0 {
		return ActionRun{}, false, err
	}
	return runs[0], true, nil
}

// FindHookRun reads the run an operation's hook step recorded, if any (a
// retried activity finds it).
func (s *Store) FindHookRun(ctx context.Context, opID, step string) (ActionRun, bool, error) {
	if opID == "" {
		return ActionRun{}, false, nil // manual and cron runs have none
	}
	runs, err := list[ActionRun](s.db.WithContext(ctx).Limit(1), "created_at", "operation_id = ? AND operation_step = ?", opID, step)
	if err != nil || len(runs) == 0 {
		return ActionRun{}, false, err
	}
	return runs[0], true, nil
}
