package worker

import (
	"context"
	"log/slog"
	"time"
)

// loop calls pass at once, then every interval, until ctx is done.
func loop(ctx context.Context, every time.Duration, pass func()) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		pass()
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// warn logs that what failed with err, unless ctx is done (the loop is
// stopping).
func warn(ctx context.Context, log *slog.Logger, what string, err error) {
	if err != nil && ctx.Err() == nil {
		orDefaultLogger(log).Warn(what, "err", err)
	}
}

func orDefaultLogger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.Default()
	}
	return l
}
