package activities

import (
	"context"
	"errors"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/store"
)

// dispatchStore is what dispatching the outbox's events reads and writes.
type dispatchStore interface {
	emitStore
	GetInstall(ctx context.Context, orgID, id string) (store.Install, error)
	EventDispatched(ctx context.Context, id string) error
}

// Dispatcher delivers the events of the notification outbox (written where
// no activity can emit: the gateway's health reports, the worker's runner
// sweep; and by activities that must not wait for a delivery to start):
// each becomes a delivery per matching subscription, its workflow started,
// and is then marked dispatched. One interrupted is dispatched again, and
// makes no delivery twice (their IDs are derived from the event's).
type Dispatcher struct {
	store dispatchStore
	n     *notifier
}

// NewDispatcher returns the dispatcher of the store's outbox.
func NewDispatcher(s dispatchStore, cfg NotifyConfig) *Dispatcher {
	return &Dispatcher{store: s, n: &notifier{store: s, cfg: cfg}}
}

// Dispatch delivers one queued event and marks it dispatched.
func (d *Dispatcher) Dispatch(ctx context.Context, q store.QueuedEvent) error {
	ev, err := q.Decode()
	if err != nil { // never readable: set aside, so it does not hold the outbox's oldest places
		return errors.Join(err, d.store.EventDispatched(ctx, q.ID))
	}
	var labels map[string]string
	if ev.InstallID != "" {
		inst, err := d.store.GetInstall(ctx, ev.OrgID, ev.InstallID)
		switch {
		case errors.Is(err, store.ErrNotFound): // deleted since: no labels to match
		case err != nil:
			return err
		default:
			labels = inst.Labels
		}
	}
	var accept func(store.NotificationSubscription) bool
	if ev.Type == contract.EventRunnerOffline {
		accept = func(sub store.NotificationSubscription) bool { return sub.OfflineMinutes() == q.OfflineMinutes }
	}
	if err := d.n.emitTo(ctx, ev, labels, accept); err != nil {
		return err
	}
	return d.store.EventDispatched(ctx, q.ID)
}
