package ctxsleep

import (
	"context"
	"time"
)

// Sleep waits for d or until ctx ends, whichever comes first: nil when it
// slept, ctx's error when ctx ended (at once when d is not positive).
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
