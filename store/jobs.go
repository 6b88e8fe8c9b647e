package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store/notify"
)

// JobSpec is what RunJob enqueues.
type JobSpec struct {
	// Key makes enqueueing idempotent: a second enqueue with the same key
	// returns the first job (RunJob uses workflow ID + step).
	Key       string
	OrgID     string
	RunnerID  string
	InstallID *string
	Type      string
	Manifest  json.RawMessage
	TimeoutMS int64
	// Workspace lets a terraform job's current attempt use that workspace's state, with a
	// credential per attempt (AttemptStateToken), or with StateToken (from NewStateToken, also
	// in the manifest; only its hash is kept) for every attempt. An enqueue that returns an
	// existing job keeps that job's.
	Workspace  string
	StateToken string
	// InputsDeferred queues the job before its inputs are known: the runner claims it and prepares,
	// then gets them with a job heartbeat once ProvideJobInputs gives them.
	InputsDeferred bool
	// InputsWaitMS bounds how long the runner waits for deferred inputs (a
	// safety net for an operation that ended without giving them); 0: no
	// bound.
	InputsWaitMS int64
}

// Claimant says what the claiming runner can run.
type Claimant struct {
	// DeferredInputs: it runs jobs queued with InputsDeferred (it said so
	// with protocol.CapabilityDeferredInputs). Others are never given one.
	DeferredInputs bool
	// GivenInputs: it runs such a job once its inputs are given (it has
	// no free place for a job to wait in). Meaningful without
	// DeferredInputs only.
	GivenInputs bool
	// Version is the runner's version, recorded on the attempt.
	Version string
	// OnlyType: it takes jobs of that type only ("": any).
	OnlyType string
}

// EnqueueJob queues a job for a runner, or returns the job already queued
// under spec.Key (created=false).
func (s *Store) EnqueueJob(ctx context.Context, spec JobSpec) (job Job, created bool, err error) {
	if spec.Key == "" || spec.RunnerID == "" || spec.Type == "" {
		return Job{}, false, errors.New("enqueue job: key, runner and type are required")
	}
	if len(spec.Manifest) == 0 {
		spec.Manifest = json.RawMessage("{}")
	}
	if err := validateStateSpec(spec); err != nil {
		return Job{}, false, fmt.Errorf("enqueue job: %w", err)
	}
	now := s.now()
	job = Job{ID: NewID("job"), OrgID: spec.OrgID, RunnerID: spec.RunnerID, InstallID: spec.InstallID,
		Key: spec.Key, Type: spec.Type, Manifest: string(spec.Manifest), Status: status.JobQueued,
		TimeoutMS: spec.TimeoutMS, InputsDeferred: spec.InputsDeferred, InputsWaitMS: spec.InputsWaitMS, CreatedAt: now, UpdatedAt: now}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "idempotency_key"}}, DoNothing: true}).Create(&job)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			job = Job{} // First would otherwise also match on the new, unused ID
			return tx.Where("idempotency_key = ?", spec.Key).First(&job).Error
		}
		created = true
		if spec.Workspace != "" {
			if err := createStateCredential(tx, job, spec.Workspace, spec.StateToken); err != nil {
				return err
			}
		}
		return addEvent(tx, job.ID, 0, status.JobQueued, "", now)
	})
	if err != nil {
		return Job{}, false, fmt.Errorf("enqueue job: %w", err)
	}
	if created {
		s.publish(ctx, notify.RunnerTopic(spec.RunnerID))
	}
	return job, created, nil
}

func addEvent(tx *gorm.DB, jobID string, attempt int, st status.Job, msg string, at time.Time) error {
	return tx.Create(&JobEvent{JobID: jobID, Attempt: attempt, Status: st, Message: msg, CreatedAt: at}).Error
}

// ClaimJob gives the runner its oldest queued job it can run (c) with a
// fresh lease, or returns nil when there is none. On PostgreSQL concurrent
// claims skip rows another transaction holds (FOR UPDATE SKIP LOCKED), and
// when every job it could run is held so, it returns an error wrapping
// ErrJobsBusy; SQLite serialises writers, which gives the same guarantee.
func (s *Store) ClaimJob(ctx context.Context, runnerID string, lease time.Duration, c Claimant) (*Job, error) {
	var job *Job
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		lock := ""
		if s.dialect == Postgres {
			lock = " FOR UPDATE SKIP LOCKED"
		}
		var ids []string
		deferred := ""
		switch {
		case c.DeferredInputs:
		case c.GivenInputs:
			deferred = " AND (NOT inputs_deferred OR inputs IS NOT NULL)"
		default:
			deferred = " AND NOT inputs_deferred"
		}
		claimable, args := "FROM jobs WHERE runner_id = ? AND status = ?"+deferred, []any{runnerID, status.JobQueued}
		if c.OnlyType != "" {
			claimable, args = claimable+" AND type = ?", append(args, c.OnlyType)
		}
		err := tx.Raw("SELECT id "+claimable+" ORDER BY created_at, id LIMIT 1"+lock, args...).Scan(&ids).Error
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			if lock == "" {
				return nil
			}
			// SKIP LOCKED skipped a queued job another transaction holds: say so rather
			// than "none", which the gateway would trust until the next notification.
			var busy bool
			if err := tx.Raw("SELECT EXISTS (SELECT 1 "+claimable+")", args...).Scan(&busy).Error; err != nil {
				return err
			}
			if busy {
				return ErrJobsBusy
			}
			return nil
		}
		now := s.now()
		expires := now.Add(lease)
		var j Job
		if err := tx.Where("id = ?", ids[0]).First(&j).Error; err != nil {
			return err
		}
		j.Status, j.Attempt, j.LeaseExpiresAt, j.UpdatedAt = status.JobRunning, j.Attempt+1, &expires, now
		if j.StartedAt == nil {
			j.StartedAt = &now
		}
		res := update(tx.Where("id = ? AND status = ?", j.ID, status.JobQueued),
			&Job{Status: j.Status, Attempt: j.Attempt, LeaseExpiresAt: &expires, StartedAt: j.StartedAt, UpdatedAt: now},
			"Status", "Attempt", "LeaseExpiresAt", "StartedAt", "UpdatedAt")
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		if err := tx.Create(&JobAttempt{JobID: j.ID, Attempt: j.Attempt, RunnerID: runnerID, RunnerVersion: c.Version, Status: status.JobRunning, ClaimedAt: now}).Error; err != nil {
			return err
		}
		job = &j
		return addEvent(tx, j.ID, j.Attempt, status.JobRunning, "claimed by runner "+runnerID, now)
	})
	if err != nil {
		return nil, fmt.Errorf("claim job: %w", err)
	}
	if job != nil {
		s.publish(ctx, notify.JobTopic(job.ID))
	}
	return job, nil
}

// ReleaseClaim undoes a claim whose answer never reached the runner (it
// stopped waiting as the job was claimed): the job is queued again with its
// attempt count as before, and the attempt that never ran is removed, so the
// job's next claim is the attempt it would have been. It does nothing once
// the attempt is no longer the running one.
func (s *Store) ReleaseClaim(ctx context.Context, runnerID, jobID string, attempt int) error {
	return s.releaseClaim(ctx, runnerID, jobID, attempt, "stopped waiting as the job was claimed")
}

// releaseClaim is ReleaseClaim, its event saying why the runner never got the job.
func (s *Store) releaseClaim(ctx context.Context, runnerID, jobID string, attempt int, why string) error {
	released := false
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		now := s.now()
		fields := []string{"Status", "Attempt", "LeaseExpiresAt", "UpdatedAt"}
		if attempt == 1 {
			fields = append(fields, "StartedAt") // never started: none
		}
		res := update(tx.Where("id = ? AND runner_id = ? AND attempt = ? AND status = ?", jobID, runnerID, attempt, status.JobRunning),
			&Job{Status: status.JobQueued, Attempt: attempt - 1, UpdatedAt: now}, fields...)
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		released = true
		if err := tx.Where("job_id = ? AND attempt = ?", jobID, attempt).Delete(&JobAttempt{}).Error; err != nil {
			return err
		}
		return addEvent(tx, jobID, attempt-1, status.JobQueued,
			"queued again: runner "+runnerID+" "+why, now)
	})
	if err != nil {
		return fmt.Errorf("release claim of job %s: %w", jobID, err)
	}
	if released {
		s.publish(ctx, notify.RunnerTopic(runnerID))
		s.publish(ctx, notify.JobTopic(jobID))
	}
	return nil
}

// currentAttempt loads what the runner's calls about an attempt need (not the manifest) and checks
// it is the one running now; another runner's job is ErrNotFound.
func currentAttempt(tx *gorm.DB, runnerID, jobID string, attempt int) (Job, error) {
	var j Job
	if err := tx.Select("id", "org_id", "install_id", "type", "attempt", "status", "started_at", "cancel_requested_at", "inputs").
		Where("id = ? AND runner_id = ?", jobID, runnerID).First(&j).Error; err != nil {
		return Job{}, notFound(err, "job "+jobID)
	}
	if j.Attempt != attempt || j.Status != status.JobRunning {
		return j, fmt.Errorf("job %s attempt %d (current attempt %d, %s): %w", jobID, attempt, j.Attempt, j.Status, ErrStaleAttempt)
	}
	return j, nil
}

// JobSignals is what a job heartbeat tells the runner besides the lease.
type JobSignals struct {
	Cancel bool // cancellation was requested
	// Inputs are the job's deferred inputs once given ("" until then, and
	// for a job whose inputs were not deferred).
	Inputs string
}

func signalsOf(j Job) JobSignals {
	sig := JobSignals{Cancel: j.CancelRequestedAt != nil}
	if j.Inputs != nil {
		sig.Inputs = *j.Inputs
	}
	return sig
}

// HeartbeatJob extends the lease of the running attempt and says whether
// cancellation was requested and what inputs were given.
func (s *Store) HeartbeatJob(ctx context.Context, runnerID, jobID string, attempt int, lease time.Duration) (time.Time, JobSignals, error) {
	var expires time.Time
	var sig JobSignals
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		j, err := currentAttempt(tx, runnerID, jobID, attempt)
		if err != nil {
			return err
		}
		expires = s.now().Add(lease)
		sig = signalsOf(j)
		return tx.Model(&Job{}).Where("id = ?", jobID).Update("lease_expires_at", expires).Error
	})
	if err != nil {
		return time.Time{}, JobSignals{}, fmt.Errorf("heartbeat: %w", err)
	}
	return expires, sig, nil
}

// PendingSignals reads the job's signals (cancellation, inputs) for a
// heartbeat held open by the gateway. It is a read of one row.
func (s *Store) PendingSignals(ctx context.Context, runnerID, jobID string, attempt int) (JobSignals, error) {
	j, err := currentAttempt(s.db.WithContext(ctx), runnerID, jobID, attempt)
	if err != nil {
		return JobSignals{}, err
	}
	return signalsOf(j), nil
}

// ProvideJobInputs gives a job queued with InputsDeferred its inputs and
// wakes the heartbeat its runner holds open or, while the job is still
// queued, its runner's claim (a runner with no free place for a job to wait
// in takes it now: Claimant.GivenInputs). Inputs are given once: a second
// call (a retried activity) changes nothing.
func (s *Store) ProvideJobInputs(ctx context.Context, jobID string, inputs json.RawMessage) error {
	if !json.Valid(inputs) {
		return errors.New("provide job inputs: not valid JSON")
	}
	var j Job
	db := s.db.WithContext(ctx)
	if err := db.Select("id", "org_id", "install_id", "inputs_deferred", "runner_id", "status").Where("id = ?", jobID).First(&j).Error; err != nil {
		return fmt.Errorf("provide job inputs: %w", notFound(err, "job "+jobID))
	}
	if !j.InputsDeferred {
		return fmt.Errorf("provide job inputs: job %s was not queued to wait for inputs", jobID)
	}
	sealed, err := sealValue(db, scopeOf(j.OrgID, j.InstallID), jobPlace("inputs", jobID), string(inputs))
	if err != nil {
		return fmt.Errorf("provide job inputs: %w", err)
	}
	now := s.now()
	res := update(db.Where("id = ? AND inputs IS NULL", jobID), &Job{Inputs: &sealed, InputsAt: &now, UpdatedAt: now},
		"Inputs", "InputsAt", "UpdatedAt")
	if res.Error != nil {
		return fmt.Errorf("provide job inputs: %w", res.Error)
	}
	s.publish(ctx, notify.JobTopic(jobID))
	if res.RowsAffected > 0 && j.Status == status.JobQueued {
		s.publish(ctx, notify.RunnerTopic(j.RunnerID))
	}
	return nil
}

var logStreams = []string{protocol.StreamStdout, protocol.StreamStderr, protocol.StreamSystem}

func validateChunks(chunks []protocol.LogChunk) error {
	if len(chunks) > protocol.MaxLogBatchChunks {
		return fieldErr("chunks", "%d chunks in one request; at most %d", len(chunks), protocol.MaxLogBatchChunks)
	}
	var prev int64
	for i, c := range chunks {
		switch {
		case c.Seq <= prev:
			return fieldErr(fmt.Sprintf("chunks[%d].seq", i), "%d must be positive and greater than the previous chunk's (%d)", c.Seq, prev)
		case !slices.Contains(logStreams, c.Stream):
			return fieldErr(fmt.Sprintf("chunks[%d].stream", i), "%q is not one of stdout, stderr, system", c.Stream)
		case len(c.Data) > protocol.MaxLogChunkBytes:
			return &FieldError{Field: fmt.Sprintf("chunks[%d].data", i),
				Message: fmt.Sprintf("%d bytes; a chunk holds at most %d: %v", len(c.Data), protocol.MaxLogChunkBytes, ErrTooLarge)}
		}
		prev = c.Seq
	}
	return nil
}

// ErrTooLarge marks input over a size limit.
var ErrTooLarge = errors.New("too large")

// CompleteJob records how an attempt ended. Sending the same completion again
// succeeds without changing anything; a completion from an attempt that is no
// longer current (lost, or superseded by a retry) is ErrStaleAttempt. The
// terraform state locks the attempt still held are released in the same
// transaction.
func (s *Store) CompleteJob(ctx context.Context, runnerID, jobID string, req protocol.CompleteRequest) error {
	_, err := s.CompleteJobRan(ctx, runnerID, jobID, req)
	return err
}

// JobRan is what a completion reports for metrics: the job's type and how
// long it ran, from its first claim to now. Zero when the call changed
// nothing (the same completion, again).
type JobRan struct {
	Type     string
	Duration time.Duration
}

// CompleteJobRan is CompleteJob, reporting the job's type and run time.
func (s *Store) CompleteJobRan(ctx context.Context, runnerID, jobID string, req protocol.CompleteRequest) (JobRan, error) {
	switch status.Job(req.Status) {
	case status.JobSucceeded, status.JobFailed, status.JobCancelled:
	default:
		return JobRan{}, fieldErr("status", "%q is not one of succeeded, failed, cancelled", req.Status)
	}
	if len(req.Outputs) > protocol.MaxOutputsBytes {
		return JobRan{}, fieldErr("outputs", "%d bytes; at most %d: %v", len(req.Outputs), protocol.MaxOutputsBytes, ErrTooLarge)
	}
	if len(req.Outputs) > 0 && !json.Valid(req.Outputs) {
		return JobRan{}, fieldErr("outputs", "is not valid JSON")
	}
	var ran JobRan
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		j, err := currentAttempt(tx, runnerID, jobID, req.Attempt)
		if errors.Is(err, ErrStaleAttempt) && j.Attempt == req.Attempt && j.Status == status.Job(req.Status) {
			return nil // the same completion, again
		}
		if err != nil {
			return err
		}
		outputs, err := sealValue(tx, scopeOf(j.OrgID, j.InstallID), jobPlace("outputs", jobID), string(req.Outputs))
		if err != nil {
			return err
		}
		now := s.now()
		res := update(tx.Where("id = ? AND attempt = ? AND status = ?", jobID, req.Attempt, status.JobRunning),
			&Job{Status: status.Job(req.Status), ExitCode: req.ExitCode, Outputs: outputs, Error: req.Error, FinishedAt: &now, UpdatedAt: now},
			"Status", "ExitCode", "Outputs", "Error", "FinishedAt", "UpdatedAt", "LeaseExpiresAt")
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrStaleAttempt
		}
		err = endAttempt(tx, jobID, req.Attempt, JobAttempt{Status: status.Job(req.Status), FinishedAt: &now, LastSeq: req.LastSeq, Error: req.Error}, "LastSeq")
		if err != nil {
			return err
		}
		if err := releaseStateLocks(tx, jobID, req.Attempt, "the job "+req.Status, now); err != nil {
			return err
		}
		ran.Type = j.Type
		if j.StartedAt != nil {
			ran.Duration = now.Sub(*j.StartedAt)
		}
		return addEvent(tx, jobID, req.Attempt, status.Job(req.Status), req.Error, now)
	})
	if err != nil {
		return JobRan{}, fmt.Errorf("complete job: %w", err)
	}
	if ran.Type != "" {
		s.publish(ctx, notify.JobTopic(jobID))
	}
	return ran, nil
}

// ExpireLeases marks every running attempt whose lease has passed as lost and
// returns the jobs it marked. The workflow that awaits each job decides
// whether to retry it. The terraform state locks a lost attempt held are
// released in the same transaction.
func (s *Store) ExpireLeases(ctx context.Context) ([]string, error) {
	now := s.now()
	var expired []Job
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Select("id", "attempt").Where("status = ? AND lease_expires_at < ?", status.JobRunning, now).Find(&expired).Error; err != nil {
			return err
		}
		for _, j := range expired {
			res := update(tx.Where("id = ? AND attempt = ? AND status = ?", j.ID, j.Attempt, status.JobRunning),
				&Job{Status: status.JobLost, UpdatedAt: now}, "Status", "UpdatedAt", "LeaseExpiresAt")
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected == 0 {
				continue
			}
			if err := endAttempt(tx, j.ID, j.Attempt, JobAttempt{Status: status.JobLost, FinishedAt: &now, Error: "lease expired"}); err != nil {
				return err
			}
			if err := addEvent(tx, j.ID, j.Attempt, status.JobLost, "lease expired: the runner stopped renewing it", now); err != nil {
				return err
			}
			if err := releaseStateLocks(tx, j.ID, j.Attempt, "the attempt was lost", now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("expire leases: %w", err)
	}
	ids := make([]string, len(expired))
	for i, j := range expired {
		ids[i] = j.ID
		s.publish(ctx, notify.JobTopic(j.ID))
	}
	return ids, nil
}

// endAttempt records how a job's attempt ended: end's status, finish time,
// error, and the other fields named.
func endAttempt(tx *gorm.DB, jobID string, attempt int, end JobAttempt, fields ...string) error {
	return update(tx.Where("job_id = ? AND attempt = ?", jobID, attempt), &end, append([]string{"Status", "FinishedAt", "Error"}, fields...)...).Error
}

// RetryJob queues a lost job again for its next attempt. It only acts when
// the job is still lost at the given attempt, so a repeated call (a retried
// activity) does nothing more.
func (s *Store) RetryJob(ctx context.Context, jobID string, lostAttempt int) (Job, error) {
	var j Job
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		now := s.now()
		res := update(tx.Where("id = ? AND attempt = ? AND status = ?", jobID, lostAttempt, status.JobLost),
			&Job{Status: status.JobQueued, UpdatedAt: now}, "Status", "UpdatedAt")
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected > 0 {
			if err := addEvent(tx, jobID, lostAttempt, status.JobQueued, "queued again after a lost attempt", now); err != nil {
				return err
			}
		}
		return tx.Where("id = ?", jobID).First(&j).Error
	})
	if err != nil {
		return Job{}, notFound(err, "retry job "+jobID)
	}
	s.publish(ctx, notify.RunnerTopic(j.RunnerID))
	return j, nil
}

// RequestCancel asks for a job to stop: a queued job is cancelled at once, a
// running one is told on its runner's next (held) heartbeat.
func (s *Store) RequestCancel(ctx context.Context, jobID, reason string) (Job, error) {
	var j Job
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// Each update holds only if the job is still as read: a claim (or a
		// completion) that commits between the read and the update makes
		// it change nothing, and the job is read again.
		for range 5 {
			if err := tx.Where("id = ?", jobID).First(&j).Error; err != nil {
				return err
			}
			now := s.now()
			var res *gorm.DB
			switch j.Status {
			case status.JobQueued, status.JobLost:
				res = update(tx.Where("id = ? AND status = ? AND attempt = ?", jobID, j.Status, j.Attempt),
					&Job{Status: status.JobCancelled, CancelRequestedAt: &now, FinishedAt: &now, UpdatedAt: now},
					"Status", "CancelRequestedAt", "FinishedAt", "UpdatedAt")
			case status.JobRunning:
				if j.CancelRequestedAt != nil {
					return nil
				}
				res = tx.Model(&Job{}).Where("id = ? AND status = ? AND attempt = ?", jobID, status.JobRunning, j.Attempt).
					Update("cancel_requested_at", now)
			default:
				return nil // it ended already
			}
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected == 0 {
				continue
			}
			if j.Status == status.JobRunning {
				j.CancelRequestedAt = &now
				return addEvent(tx, jobID, j.Attempt, "cancel_requested", reason, now)
			}
			j.Status, j.FinishedAt, j.CancelRequestedAt = status.JobCancelled, &now, &now
			return addEvent(tx, jobID, j.Attempt, status.JobCancelled, reason, now)
		}
		return fmt.Errorf("job %s kept changing while being cancelled: %w", jobID, ErrConflict)
	})
	if err != nil {
		return Job{}, notFound(err, "cancel job "+jobID)
	}
	s.publish(ctx, notify.JobTopic(jobID))
	return j, nil
}

// GetJobByID reads a job without an org check, for activities that were given
// the ID by the control plane itself.
func (s *Store) GetJobByID(ctx context.Context, jobID string) (Job, error) {
	return first[Job](s.db.WithContext(ctx), "job "+jobID, "id = ?", jobID)
}

// GetJobOutcome reads how a job stands or ended: its ID, status, attempt,
// exit code, error and outputs (not its manifest or inputs), for activities
// that await it.
func (s *Store) GetJobOutcome(ctx context.Context, jobID string) (Job, error) {
	var j Job
	err := s.db.WithContext(ctx).Select("id", "status", "attempt", "exit_code", "error", "outputs").
		Where("id = ?", jobID).Take(&j).Error
	if err != nil {
		return Job{}, notFound(err, "job "+jobID)
	}
	return j, nil
}

// GetJob reads one of the org's jobs.
func (s *Store) GetJob(ctx context.Context, orgID, jobID string) (Job, error) {
	return first[Job](s.db.WithContext(ctx), "job "+jobID, "org_id = ? AND id = ?", orgID, jobID)
}

// ListJobs lists an install's jobs, newest first.
func (s *Store) ListJobs(ctx context.Context, orgID, installID string, limit int) ([]Job, error) {
	return newestOfInstall[Job](s.db.WithContext(ctx), orgID, installID, limit)
}

// JobHistory returns a job's attempts and status history.
func (s *Store) JobHistory(ctx context.Context, jobID string) ([]JobAttempt, []JobEvent, error) {
	attempts, events := []JobAttempt{}, []JobEvent{}
	db := s.db.WithContext(ctx)
	if err := db.Where("job_id = ?", jobID).Order("attempt").Find(&attempts).Error; err != nil {
		return nil, nil, err
	}
	if err := db.Where("job_id = ?", jobID).Order("id").Find(&events).Error; err != nil {
		return nil, nil, err
	}
	return attempts, events, nil
}

// LogCursor is a position in a job's logs: after (Attempt, Seq).
type LogCursor struct {
	Attempt int
	Seq     int64
}

// ListLogs returns up to limit chunks of a job after the cursor, in order of
// attempt then seq.
func (s *Store) ListLogs(ctx context.Context, jobID string, after LogCursor, limit int) ([]JobLogChunk, error) {
	return list[JobLogChunk](s.db.WithContext(ctx).Limit(limit), "attempt, seq",
		"job_id = ? AND (attempt > ? OR (attempt = ? AND seq > ?))", jobID, after.Attempt, after.Attempt, after.Seq)
}
