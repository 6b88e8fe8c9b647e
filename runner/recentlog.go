package runner

import (
	"context"
	"errors"
	"log/slog"
	"sync"
)

// maxRecentLog bounds the runner's recent log: what a support bundle gets of it.
const maxRecentLog = 1 << 20

// recentLog keeps the tail of the runner's own log in memory (at most max bytes, whole lines), for the
// support jobs it writes it out to (protocol.SupportRunnerLogFile).
type recentLog struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (l *recentLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	if over := len(l.buf) - l.max; over > 0 {
		cut := over
		for cut < len(l.buf) && l.buf[cut-1] != '\n' {
			cut++
		}
		l.buf = append(l.buf[:0], l.buf[cut:]...)
	}
	return len(p), nil
}

// snapshot returns a copy of the recent log.
func (l *recentLog) snapshot() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]byte(nil), l.buf...)
}

// teeHandler sends every record to both handlers.
type teeHandler struct{ a, b slog.Handler }

func (h teeHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.a.Enabled(ctx, level) || h.b.Enabled(ctx, level)
}

func (h teeHandler) Handle(ctx context.Context, r slog.Record) error {
	var errA, errB error
	if h.a.Enabled(ctx, r.Level) {
		errA = h.a.Handle(ctx, r.Clone())
	}
	if h.b.Enabled(ctx, r.Level) {
		errB = h.b.Handle(ctx, r)
	}
	return errors.Join(errA, errB)
}

func (h teeHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return teeHandler{h.a.WithAttrs(attrs), h.b.WithAttrs(attrs)}
}

func (h teeHandler) WithGroup(name string) slog.Handler {
	return teeHandler{h.a.WithGroup(name), h.b.WithGroup(name)}
}
