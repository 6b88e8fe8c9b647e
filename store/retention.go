package store

import (
	"context"
	"fmt"
	"time"

	"github.com/outpost-dev/outpost/protocol"
)

// Retention of what grows with use and is not a bundle (support.go sweeps bundles): the lines a logs
// request printed (a customer's container logs, kept as long as a bundle) and the audit log.
const (
	LogsRequestRetention  = DefaultSupportBundleRetention
	DefaultAuditRetention = 400 * 24 * time.Hour
)

// SweepLogsRequestLines deletes the log lines of logs requests (kube_logs jobs) that finished over
// LogsRequestRetention ago; the jobs stay, with no lines. It returns how many lines it deleted.
func (s *Store) SweepLogsRequestLines(ctx context.Context) (int64, error) {
	db := s.db.WithContext(ctx)
	old := db.Model(&Job{}).Select("id").Where("type = ? AND finished_at <= ?", protocol.JobTypeKubeLogs, s.now().Add(-LogsRequestRetention))
	res := db.Where("job_id IN (?)", old).Delete(&JobLogChunk{})
	if res.Error != nil {
		return 0, fmt.Errorf("sweep logs requests' lines: %w", res.Error)
	}
	return res.RowsAffected, nil
}

// SweepAuditEvents deletes audit events older than retention (DefaultAuditRetention when 0); it
// returns how many.
func (s *Store) SweepAuditEvents(ctx context.Context, retention time.Duration) (int64, error) {
	if retention <= 0 {
		retention = DefaultAuditRetention
	}
	res := s.db.WithContext(ctx).Where("created_at <= ?", s.now().Add(-retention)).Delete(&AuditEvent{})
	if res.Error != nil {
		return 0, fmt.Errorf("sweep audit events: %w", res.Error)
	}
	return res.RowsAffected, nil
}
