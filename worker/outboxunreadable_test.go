package worker_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/activities"
	"github.com/outpost-dev/outpost/store/storetest"
	"github.com/outpost-dev/outpost/worker"
)

// An event that cannot be read is reported once and set aside: it does not
// stay first in line, where enough of them would stop every later event.
func TestAnUnreadableEventDoesNotHoldTheOutbox(t *testing.T) {
	ctx := context.Background()
	s, tn := storetest.PostgresTenant(t)
	err := s.DB().Exec(`INSERT INTO notification_events (id, org_id, type, offline_minutes, event, created_at)
		VALUES ('nev_broken', ?, 'health.changed', 0, '{not json', ?)`, tn.Org.ID, time.Now()).Error
	if err != nil {
		t.Fatal(err)
	}
	o := worker.Outbox{Store: s, Dispatcher: activities.NewDispatcher(s, activities.NotifyConfig{})}
	if _, err := o.Dispatch(ctx); err == nil || !strings.Contains(err.Error(), "nev_broken") {
		t.Fatalf("dispatching an unreadable event: %v, want an error naming it", err)
	}
	pending, err := s.PendingEvents(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 0 {
		t.Fatalf("still pending after one try: %+v", pending)
	}
	if _, err := o.Dispatch(ctx); err != nil {
		t.Fatalf("the next dispatch: %v", err)
	}
}
