package store

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"github.com/outpost-dev/outpost/contract/status"
)

// CreateRunbookRun records a run, queued, with its steps pending (each
// step's Name, Kind and Target given).
func (s *Store) CreateRunbookRun(ctx context.Context, r RunbookRun, steps []RunbookRunStep) (RunbookRun, error) {
	err := createRun(s, ctx, "runbook run", "rbr", &r, r.head(), func(runID string) []RunbookRunStep {
		for i := range steps {
			steps[i].RunID, steps[i].StepIndex, steps[i].Status = runID, i, ActionStepPending
		}
		return steps
	}, nil)
	if err != nil {
		return RunbookRun{}, err
	}
	return r, nil
}

// GetRunbookRun reads one of an org's runbook runs.
func (s *Store) GetRunbookRun(ctx context.Context, orgID, id string) (RunbookRun, error) {
	return first[RunbookRun](s.db.WithContext(ctx), "runbook run "+id, "org_id = ? AND id = ?", orgID, id)
}

// GetRunbookRunByID reads a run for the workflow that runs it.
func (s *Store) GetRunbookRunByID(ctx context.Context, id string) (RunbookRun, error) {
	return first[RunbookRun](s.db.WithContext(ctx), "runbook run "+id, "id = ?", id)
}

// ListRunbookRuns lists the runs of an install's runbook, newest first.
func (s *Store) ListRunbookRuns(ctx context.Context, orgID, installID, runbook string, limit int) ([]RunbookRun, error) {
	return list[RunbookRun](s.db.WithContext(ctx).Limit(limit), "created_at DESC, id DESC",
		"org_id = ? AND install_id = ? AND runbook = ?", orgID, installID, runbook)
}

// ListRunbookRunSteps lists a run's steps in order.
func (s *Store) ListRunbookRunSteps(ctx context.Context, runID string) ([]RunbookRunStep, error) {
	return list[RunbookRunStep](s.db.WithContext(ctx), "step_index", "run_id = ?", runID)
}

// RunbookStepStart is how a step starts: running, with its action run or
// operation, or waiting at its approval gate.
type RunbookStepStart struct {
	Status      status.Job
	ActionRunID string
	OperationID string
}

// StartRunbookStep records that a step started; its run takes the step's
// status (running, or waiting for approval).
func (s *Store) StartRunbookStep(ctx context.Context, runID string, index int, start RunbookStepStart) error {
	now := s.now()
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		step := RunbookRunStep{Status: start.Status, ActionRunID: start.ActionRunID, OperationID: start.OperationID, StartedAt: &now}
		q := update(tx.Where("run_id = ? AND step_index = ?", runID, index), &step,
			"Status", "ActionRunID", "OperationID", "StartedAt", "Error", "ApprovedBy", "FinishedAt")
		if q.Error != nil {
			return q.Error
		}
		if q.RowsAffected == 0 {
			return notFound(gorm.ErrRecordNotFound, fmt.Sprintf("step %d of runbook run %s", index, runID))
		}
		return update(tx.Where("id = ?", runID), &RunbookRun{Status: start.Status}, "Status").Error
	})
	if err != nil {
		return fmt.Errorf("start step %d of runbook run %s: %w", index, runID, err)
	}
	return nil
}

// FinishRunbookStep records how a step ended.
func (s *Store) FinishRunbookStep(ctx context.Context, runID string, index int, st status.Job, why string) error {
	now := s.now()
	step := RunbookRunStep{Status: st, Error: why, FinishedAt: &now}
	err := update(s.db.WithContext(ctx).Where("run_id = ? AND step_index = ?", runID, index), &step, "Status", "Error", "FinishedAt").Error
	if err != nil {
		return fmt.Errorf("finish step %d of runbook run %s: %w", index, runID, err)
	}
	return nil
}

// ApproveRunbookStep records who approved the gate a run waits at; a run
// not waiting at one is ErrConflict. It returns the gate's step.
func (s *Store) ApproveRunbookStep(ctx context.Context, runID, by string) (RunbookRunStep, error) {
	var step RunbookRunStep
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		step, err = first[RunbookRunStep](tx, "gate of runbook run "+runID, "run_id = ? AND status = ?", runID, RunbookWaitingApproval)
		if err != nil {
			return fmt.Errorf("runbook run %s is not waiting for approval: %w", runID, ErrConflict)
		}
		step.ApprovedBy = by
		return update(tx.Where("run_id = ? AND step_index = ?", runID, step.StepIndex), &step, "ApprovedBy").Error
	})
	if err != nil {
		return RunbookRunStep{}, fmt.Errorf("approve runbook run %s: %w", runID, err)
	}
	return step, nil
}

// FinishRunbookRun records how a run ended; its steps still pending are
// skipped.
func (s *Store) FinishRunbookRun(ctx context.Context, runID string, st status.Job, why string) error {
	now := s.now()
	return finishRun(s, ctx, "runbook run", runID, &RunbookRun{Status: st, Error: why, FinishedAt: &now}, &RunbookRunStep{Status: ActionStepSkipped}, nil)
}

// ResumeRunbookRun makes a failed or cancelled run queued again: the steps
// that did not succeed are pending; those that did stay as they are (a
// resumed run does not run them again). Any other run is ErrConflict.
func (s *Store) ResumeRunbookRun(ctx context.Context, orgID, runID string) (RunbookRun, error) {
	var run RunbookRun
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if run, err = first[RunbookRun](tx, "runbook run "+runID, "org_id = ? AND id = ?", orgID, runID); err != nil {
			return err
		}
		if run.Status != status.JobFailed && run.Status != status.JobCancelled {
			return fmt.Errorf("runbook run %s is %s: only a failed or cancelled run is resumed: %w", runID, run.Status, ErrConflict)
		}
		pending := RunbookRunStep{Status: ActionStepPending}
		if err := update(tx.Where("run_id = ? AND status <> ?", runID, status.JobSucceeded), &pending,
			"Status", "Error", "StartedAt", "FinishedAt", "ApprovedBy").Error; err != nil {
			return err
		}
		run.Status, run.Error, run.FinishedAt = status.JobQueued, "", nil
		return update(tx.Where("id = ?", runID), &run, "Status", "Error", "FinishedAt").Error
	})
	if err != nil {
		return RunbookRun{}, fmt.Errorf("resume runbook run %s: %w", runID, err)
	}
	return run, nil
}
