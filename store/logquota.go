package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store/notify"
)

// AppendLogs stores log chunks of an attempt, up to quota bytes of log per
// attempt (protocol.MaxJobLogBytes when 0). Chunks already stored are
// ignored, so a retried batch never duplicates a line. The chunk that would
// pass the quota is stored as protocol.LogTruncatedMarker instead, and every
// later chunk is acknowledged but dropped. Logs of an attempt whose
// completion was recorded are refused (ErrStaleAttempt) past the last line
// the completion declared (its LastSeq: lines still in flight are taken); those of an attempt
// marked lost are still taken, within the quota: they explain what happened.
// It returns the highest seq now acknowledged for the attempt in this batch.
func (s *Store) AppendLogs(ctx context.Context, runnerID, jobID string, attempt int, chunks []protocol.LogChunk, quota int64) (int64, error) {
	if err := validateChunks(chunks); err != nil {
		return 0, err
	}
	if quota <= 0 {
		quota = protocol.MaxJobLogBytes
	}
	var j Job
	if err := s.db.WithContext(ctx).Select("id", "attempt", "type", "org_id", "install_id").Where("id = ? AND runner_id = ?", jobID, runnerID).First(&j).Error; err != nil {
		return 0, notFound(err, "job "+jobID)
	}
	if attempt < 1 || attempt > j.Attempt {
		return 0, fmt.Errorf("job %s has no attempt %d: %w", jobID, attempt, ErrStaleAttempt)
	}
	if len(chunks) == 0 {
		return 0, nil
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var a JobAttempt
		q := tx.Select("status", "last_seq", "log_bytes", "log_truncated").Where("job_id = ? AND attempt = ?", jobID, attempt)
		if s.dialect == Postgres {
			q = q.Clauses(clause.Locking{Strength: "UPDATE"}) // one append of the attempt at a time: the count holds
		}
		if err := q.Take(&a).Error; err != nil {
			return notFound(err, fmt.Sprintf("job %s attempt %d", jobID, attempt))
		}
		if status.JobTerminal(a.Status) && a.Status != status.JobLost && chunks[len(chunks)-1].Seq > a.LastSeq {
			return fmt.Errorf("job %s attempt %d has ended (%s): its log is closed: %w", jobID, attempt, a.Status, ErrStaleAttempt)
		}
		rows, added, truncated, err := s.newChunks(tx, jobID, attempt, chunks, a, quota)
		if err != nil || len(rows) == 0 {
			return err
		}
		if j.Type == protocol.JobTypeCommand { // a debug command's output: sealed at rest
			if err := sealChunks(tx, scopeOf(j.OrgID, j.InstallID), rows); err != nil {
				return err
			}
		}
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(rows, 100).Error; err != nil {
			return err
		}
		return tx.Model(&JobAttempt{}).Where("job_id = ? AND attempt = ?", jobID, attempt).
			Updates(map[string]any{"log_bytes": gorm.Expr("log_bytes + ?", added), "log_truncated": truncated}).Error
	})
	if err != nil {
		return 0, fmt.Errorf("append logs: %w", err)
	}
	s.publish(ctx, notify.JobLogsTopic(jobID))
	return chunks[len(chunks)-1].Seq, nil
}

// newChunks are the rows of the chunks not stored yet that fit the quota
// (the first that does not becomes the truncation marker), their bytes, and
// whether the log is now truncated.
func (s *Store) newChunks(tx *gorm.DB, jobID string, attempt int, chunks []protocol.LogChunk, a JobAttempt, quota int64) ([]JobLogChunk, int64, bool, error) {
	if a.LogTruncated {
		return nil, 0, true, nil
	}
	var stored []int64
	if err := tx.Model(&JobLogChunk{}).Where("job_id = ? AND attempt = ? AND seq BETWEEN ? AND ?", jobID, attempt,
		chunks[0].Seq, chunks[len(chunks)-1].Seq).Pluck("seq", &stored).Error; err != nil {
		return nil, 0, false, err
	}
	have := make(map[int64]bool, len(stored))
	for _, seq := range stored {
		have[seq] = true
	}
	var rows []JobLogChunk
	var added int64
	for _, c := range chunks {
		if have[c.Seq] {
			continue
		}
		row := JobLogChunk{JobID: jobID, Attempt: attempt, Seq: c.Seq, Stream: c.Stream, Data: c.Data, Time: c.Time.UTC()}
		if a.LogBytes+added+int64(len(c.Data)) > quota {
			row.Stream, row.Data, row.Time = protocol.StreamSystem, protocol.LogTruncatedMarker+"\n", time.Now().UTC()
			return append(rows, row), added, true, nil
		}
		added += int64(len(c.Data))
		rows = append(rows, row)
	}
	return rows, added, false, nil
}
