package storetest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// JobLogs is everything a job wrote, every attempt, in order.
func JobLogs(t testing.TB, s *store.Store, jobID string) string {
	t.Helper()
	chunks, err := s.ListLogs(context.Background(), jobID, store.LogCursor{}, 100_000)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString(c.Data)
	}
	return b.String()
}

// WaitJob returns the job once it ended: neither queued nor running (a wait
// for a state, not a timing assertion; it fails the test after within).
func WaitJob(t testing.TB, s *store.Store, jobID string, within time.Duration) store.Job {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		j, err := s.GetJobByID(context.Background(), jobID)
		if err != nil {
			t.Fatal(err)
		}
		if j.Status != status.JobQueued && j.Status != status.JobRunning {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still %s after %s", jobID, j.Status, within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
