package runner

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/outpost-dev/outpost/internal/ctxsleep"
)

// retryPolicy says how to wait between tries of a failing call: exponential
// backoff with full jitter, from base up to max.
type retryPolicy struct {
	base time.Duration
	max  time.Duration
}

var defaultRetry = retryPolicy{base: 500 * time.Millisecond, max: 30 * time.Second}

func (p retryPolicy) backoff() *backoff { return &backoff{policy: p} }

// backoff counts consecutive failures and says how long to wait after each.
type backoff struct {
	policy   retryPolicy
	failures int
}

// next returns a random wait in [0, min(max, base·2^failures)) and counts
// one more failure.
func (b *backoff) next() time.Duration {
	ceiling := b.policy.max
	if b.failures < 30 {
		ceiling = min(b.policy.max, b.policy.base<<b.failures)
	}
	b.failures++
	if ceiling <= 0 {
		return 0
	}
	return rand.N(ceiling)
}

func (b *backoff) reset() { b.failures = 0 }

// sleep waits for d or until ctx ends, whichever comes first.
var sleep = ctxsleep.Sleep

// retry calls call until it succeeds, fails for good (see permanent), or ctx
// ends, waiting with backoff between tries and logging each failure.
func retry[T any](ctx context.Context, p retryPolicy, log *slog.Logger, what string, call func(context.Context) (T, error)) (T, error) {
	b := p.backoff()
	for {
		v, err := call(ctx)
		if err == nil || permanent(err) || ctx.Err() != nil {
			return v, err
		}
		wait := b.next()
		log.Warn(what+" failed, retrying", "err", err, "retry_in", wait.Round(time.Millisecond))
		if sleep(ctx, wait) != nil {
			return v, err
		}
	}
}
