package storetest

import (
	"context"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/store"
)

// StateUnlocked reports whether a job's history says the state lock lockID
// of its attempt was released, with the history to show when it does not.
func StateUnlocked(t testing.TB, s *store.Store, jobID string, attempt int, lockID string) ([]store.JobEvent, bool) {
	t.Helper()
	_, events, err := s.JobHistory(context.Background(), jobID)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if e.Status == "state_unlocked" && e.Attempt == attempt && strings.Contains(e.Message, lockID) {
			return events, true
		}
	}
	return events, false
}
