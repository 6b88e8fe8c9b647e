package worker

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/outpost-dev/outpost/activities"
	"github.com/outpost-dev/outpost/store"
)

// outboxStore is what the outbox's loop reads and writes of the store.
type outboxStore interface {
	offlineStore
	PendingEvents(ctx context.Context, limit int) ([]store.QueuedEvent, error)
	PruneEvents(ctx context.Context, before time.Time) error
}

// Outbox dispatches the notification outbox's events (activities.Dispatcher)
// as they come, and every minute writes runner.offline for the runners
// offline longer than a subscription lets them be, and prunes the events
// dispatched long ago. The events stay in the outbox until dispatched: a
// worker that dies leaves them to the next.
type Outbox struct {
	Store      outboxStore
	Dispatcher *activities.Dispatcher
	Logger     *slog.Logger
	// Every is how often it looks for events (default 500ms); SweepEvery
	// how often it looks for offline runners (default a minute); Keep how
	// long a dispatched event is kept (default 30 days: a runner offline
	// no longer than OfflineHorizon is told of once).
	Every, SweepEvery, Keep time.Duration
}

// Run dispatches and sweeps until ctx is done.
func (o *Outbox) Run(ctx context.Context) error {
	sweepEvery := orDefault(o.SweepEvery, time.Minute)
	var swept time.Time
	return loop(ctx, orDefault(o.Every, 500*time.Millisecond), func() {
		if time.Since(swept) >= sweepEvery {
			swept = time.Now()
			warn(ctx, o.Logger, "notifications: sweeping offline runners", o.Sweep(ctx, swept))
		}
		_, err := o.Dispatch(ctx)
		warn(ctx, o.Logger, "notifications: dispatching events", err)
	})
}

// Dispatch dispatches the pending events, oldest first; it returns how
// many it dispatched.
func (o *Outbox) Dispatch(ctx context.Context) (int, error) {
	evs, err := o.Store.PendingEvents(ctx, 100)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, q := range evs {
		if err := o.Dispatcher.Dispatch(ctx, q); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// Sweep writes runner.offline for the runners offline at now, and prunes
// old events.
func (o *Outbox) Sweep(ctx context.Context, now time.Time) error {
	err := queueOfflineRunners(ctx, o.Store, now)
	return errors.Join(err, o.Store.PruneEvents(ctx, now.Add(-orDefault(o.Keep, 30*24*time.Hour))))
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
