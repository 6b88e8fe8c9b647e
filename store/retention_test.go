package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// The sweep deletes a logs request's lines once it finished over LogsRequestRetention ago (not
// another job's, nor a recent request's), and audit events older than the retention asked for.
func TestRetentionSweeps(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		ran := func(key, typ string, finished time.Time) string {
			t.Helper()
			j, _, err := f.s.EnqueueJob(ctx, store.JobSpec{Key: key, OrgID: f.org.ID, RunnerID: f.runner.ID, InstallID: &f.inst.ID,
				Type: typ, Manifest: json.RawMessage(`{}`)})
			if err != nil {
				t.Fatal(err)
			}
			if c, err := f.s.ClaimJob(ctx, f.runner.ID, time.Minute, store.Claimant{}); err != nil || c == nil || c.ID != j.ID {
				t.Fatalf("claim %s: %+v %v", key, c, err)
			}
			if _, err := f.s.AppendLogs(ctx, f.runner.ID, j.ID, 1, []protocol.LogChunk{{Seq: 1, Stream: "stdout", Data: "a line\n", Time: time.Now()}}, 0); err != nil {
				t.Fatal(err)
			}
			if err := f.s.CompleteJob(ctx, f.runner.ID, j.ID, protocol.CompleteRequest{Attempt: 1, Status: protocol.StatusSucceeded}); err != nil {
				t.Fatal(err)
			}
			if err := f.s.DB().Model(&store.Job{}).Where("id = ?", j.ID).Update("finished_at", finished).Error; err != nil {
				t.Fatal(err)
			}
			return j.ID
		}
		old := time.Now().Add(-store.LogsRequestRetention - time.Hour)
		expired := ran("logs-old", protocol.JobTypeKubeLogs, old)
		recent := ran("logs-recent", protocol.JobTypeKubeLogs, time.Now())
		other := ran("noop-old", protocol.JobTypeNoop, old)
		if n, err := f.s.SweepLogsRequestLines(ctx); err != nil || n != 1 {
			t.Fatalf("sweep logs requests: %d, %v; want 1 line", n, err)
		}
		for id, want := range map[string]int{expired: 0, recent: 1, other: 1} {
			if lines, err := f.s.ListLogs(ctx, id, store.LogCursor{}, 10); err != nil || len(lines) != want {
				t.Errorf("job %s: %d lines (%v), want %d", id, len(lines), err, want)
			}
		}

		for _, at := range []time.Time{time.Now().Add(-49 * time.Hour), time.Now().Add(-time.Hour)} {
			if _, err := f.s.RecordAuditEvent(ctx, store.AuditEvent{OrgID: f.org.ID, CreatedAt: at, Via: "bearer", Method: "POST",
				Route: "/v1/apps", Action: "createApp", Status: 201}); err != nil {
				t.Fatal(err)
			}
		}
		if n, err := f.s.SweepAuditEvents(ctx, 48*time.Hour); err != nil || n != 1 {
			t.Fatalf("sweep audit events: %d, %v; want 1", n, err)
		}
		if evs, err := f.s.ListAuditEvents(ctx, f.org.ID, store.AuditFilter{}); err != nil || len(evs) != 1 {
			t.Errorf("audit events left: %d (%v), want 1", len(evs), err)
		}
	})
}
