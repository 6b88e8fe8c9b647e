package store

import (
	"context"
	"fmt"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
)

// ReleaseUnanswered undoes the claims made for the runner at that version
// between from and to whose answers it never got (the gateway that claimed
// died before answering, or the connection broke): each job it does not hold
// (held: job id to attempt) is put back as ReleaseClaim does. It returns the
// jobs put back.
func (s *Store) ReleaseUnanswered(ctx context.Context, runnerID, version string, from, to time.Time, held map[string]int) ([]string, error) {
	var claimed []JobAttempt
	err := s.db.WithContext(ctx).Model(&JobAttempt{}).
		Joins("JOIN jobs ON jobs.id = job_attempts.job_id AND jobs.attempt = job_attempts.attempt").
		Where("jobs.runner_id = ? AND jobs.status = ? AND job_attempts.runner_id = ? AND job_attempts.runner_version = ?",
			runnerID, status.JobRunning, runnerID, version).
		Where("job_attempts.claimed_at BETWEEN ? AND ?", from, to).
		Select("job_attempts.job_id", "job_attempts.attempt").Find(&claimed).Error
	if err != nil {
		return nil, fmt.Errorf("list the unanswered claims of runner %s: %w", runnerID, err)
	}
	var released []string
	for _, a := range claimed {
		if attempt, ok := held[a.JobID]; ok && attempt == a.Attempt {
			continue
		}
		if err := s.releaseClaim(ctx, runnerID, a.JobID, a.Attempt, "never got the answer to its claim"); err != nil {
			return released, err
		}
		released = append(released, a.JobID)
	}
	return released, nil
}
