package store

import (
	"context"
	"fmt"

	"github.com/outpost-dev/outpost/contract/status"
)

// Install command statuses follow the job's: queued, running, succeeded,
// failed, cancelled.

// CreateInstallCommand records a debug command before its workflow starts.
func (s *Store) CreateInstallCommand(ctx context.Context, c InstallCommand) (InstallCommand, error) {
	if c.ID == "" {
		c.ID = NewID("cmd")
	}
	c.Status = status.JobQueued
	c.CreatedAt = s.now()
	if err := s.db.WithContext(ctx).Create(&c).Error; err != nil {
		return InstallCommand{}, fmt.Errorf("create command: %w", err)
	}
	return c, nil
}

// GetInstallCommand reads one of an install's commands.
func (s *Store) GetInstallCommand(ctx context.Context, orgID, id string) (InstallCommand, error) {
	return first[InstallCommand](s.db.WithContext(ctx), "command "+id, "org_id = ? AND id = ?", orgID, id)
}

// GetInstallCommandByID reads a command for the workflow that runs it.
func (s *Store) GetInstallCommandByID(ctx context.Context, id string) (InstallCommand, error) {
	return first[InstallCommand](s.db.WithContext(ctx), "command "+id, "id = ?", id)
}

// ListInstallCommands lists an install's commands, newest first.
func (s *Store) ListInstallCommands(ctx context.Context, orgID, installID string, limit int) ([]InstallCommand, error) {
	return newestOfInstall[InstallCommand](s.db.WithContext(ctx), orgID, installID, limit)
}

// UpdateInstallCommand records the command's job and progress.
// Its output and error are sealed with the install's data key.
func (s *Store) UpdateInstallCommand(ctx context.Context, c InstallCommand) error {
	db := s.db.WithContext(ctx)
	of, err := first[InstallCommand](db.Select("id", "install_id"), "command "+c.ID, "id = ?", c.ID)
	if err != nil {
		return fmt.Errorf("update command %s: %w", c.ID, err)
	}
	row := InstallCommand{ID: of.ID, InstallID: of.InstallID, JobID: c.JobID, Status: c.Status, ExitCode: c.ExitCode,
		Output: c.Output, Error: c.Error, FinishedAt: c.FinishedAt}
	if err := row.sealed(db, false); err != nil {
		return fmt.Errorf("update command %s: %w", c.ID, err)
	}
	err = update(db.Where("id = ?", c.ID), &row, "JobID", "Status", "ExitCode", "Output", "Error", "FinishedAt").Error
	if err != nil {
		return fmt.Errorf("update command %s: %w", c.ID, err)
	}
	return nil
}
