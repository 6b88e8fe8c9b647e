package activities

import (
	"context"
	"time"
)

// awaitEnd reads a row (read says whether it has ended) until it has ended,
// again when woke (the store's notification of the row) fires or every
// check, whichever comes first, until ctx ends. Meanwhile it heartbeats the
// activity with the row: eachCheck after each read, onTick on each tick
// (either may be nil).
func awaitEnd[T any](ctx context.Context, woke <-chan struct{}, check time.Duration, read func(context.Context) (T, bool, error),
	eachCheck, onTick func(T)) (T, error) {
	tick := time.NewTicker(check)
	defer tick.Stop()
	for {
		row, ended, err := read(ctx)
		if err != nil || ended {
			return row, err
		}
		if eachCheck != nil {
			eachCheck(row)
		}
		select {
		case <-woke:
		case <-tick.C:
			if onTick != nil {
				onTick(row)
			}
		case <-ctx.Done():
			var zero T
			return zero, ctx.Err()
		}
	}
}
