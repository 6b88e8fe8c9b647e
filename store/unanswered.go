package store

import (
	"context"
	"fmt"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
)

// ReleaseUnanswered undoes the claims made for the runner at that version
// between from and to whose answers it never got (the gateway that claimed
// died before answering, or the connection broke): each running attempt it
// does not hold (held: job id to attempt) and whose lease was never renewed
// (lease: the one the claim gave) is put back as ReleaseClaim does. The
// lease check spares an attempt another process of the runner got (a pod of
// a rolling restart beside the new one): its first job heartbeat goes at
// once. It returns the jobs put back.
func (s *Store) ReleaseUnanswered(ctx context.Context, runnerID, version string, from, to time.Time, lease time.Duration, held map[string]int) ([]string, error) {
	var claimed []struct {
		JobID          string
		Attempt        int
		ClaimedAt      time.Time
		LeaseExpiresAt *time.Time
	}
	err := s.db.WithContext(ctx).Model(&JobAttempt{}).
		Joins("JOIN jobs ON jobs.id = job_attempts.job_id AND jobs.attempt = job_attempts.attempt").
		Where("jobs.runner_id = ? AND jobs.status = ? AND job_attempts.runner_id = ? AND job_attempts.runner_version = ?",
			runnerID, status.JobRunning, runnerID, version).
		Where("job_attempts.claimed_at BETWEEN ? AND ?", from, to).
		Select("job_attempts.job_id", "job_attempts.attempt", "job_attempts.claimed_at", "jobs.lease_expires_at").
		Scan(&claimed).Error
	if err != nil {
		return nil, fmt.Errorf("list the unanswered claims of runner %s: %w", runnerID, err)
	}
	var released []string
	for _, a := range claimed {
		renewed := a.LeaseExpiresAt != nil && a.LeaseExpiresAt.After(a.ClaimedAt.Add(lease))
		if attempt, ok := held[a.JobID]; renewed || ok && attempt == a.Attempt {
			continue
		}
		if err := s.releaseClaim(ctx, runnerID, a.JobID, a.Attempt, "never got the answer to its claim"); err != nil {
			return released, err
		}
		released = append(released, a.JobID)
	}
	return released, nil
}
