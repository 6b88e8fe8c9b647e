package devserver

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"

	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
)

// parseLevel turns Options.LogLevel into a slog level. Accepts debug, info,
// warn/warning and error (any case).
func parseLevel(s string) (slog.Level, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return slog.LevelWarn, nil
	}
	if strings.EqualFold(s, "warning") {
		s = "warn"
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("devserver: invalid LogLevel %q (want debug, info, warn or error): %w", s, err)
	}
	return l, nil
}

// newSlog returns base (or a text logger on stderr when base is nil)
// filtered to records at or above level.
func newSlog(base *slog.Logger, level slog.Level) *slog.Logger {
	if base == nil {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	}
	return slog.New(minLevelHandler{h: base.Handler(), min: level})
}

// minLevelHandler drops records below min before they reach h.
type minLevelHandler struct {
	h   slog.Handler
	min slog.Level
}

func (m minLevelHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.min && m.h.Enabled(ctx, l)
}

func (m minLevelHandler) Handle(ctx context.Context, r slog.Record) error {
	return m.h.Handle(ctx, r)
}

func (m minLevelHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return minLevelHandler{h: m.h.WithAttrs(attrs), min: m.min}
}

func (m minLevelHandler) WithGroup(name string) slog.Handler {
	return minLevelHandler{h: m.h.WithGroup(name), min: m.min}
}

// serverLogger adapts the Temporal server's log.Logger to slog (levels filtered by newSlog's
// logger). Fatal and Panic only log at error level; once quiet is set, every record is
// demoted to debug (see the package doc, Logging).
type serverLogger struct {
	sl    *slog.Logger
	quiet *atomic.Bool
}

// benignWarnings are start-up warnings that are expected in this setup and
// are logged at info instead.
var benignWarnings = []string{
	// We leave the frontend HTTP API (and so Nexus over HTTP) off.
	"HTTP API port has not been set.",
}

// Deliberately not a log.SLogWrapper: server components asking for an
// *slog.Logger then go through log() too, and so honour quiet.
var _ log.Logger = serverLogger{}

func (l serverLogger) Debug(msg string, tags ...tag.Tag)  { l.log(slog.LevelDebug, msg, tags) }
func (l serverLogger) Info(msg string, tags ...tag.Tag)   { l.log(slog.LevelInfo, msg, tags) }
func (l serverLogger) Warn(msg string, tags ...tag.Tag)   { l.log(slog.LevelWarn, msg, tags) }
func (l serverLogger) Error(msg string, tags ...tag.Tag)  { l.log(slog.LevelError, msg, tags) }
func (l serverLogger) DPanic(msg string, tags ...tag.Tag) { l.log(slog.LevelError, msg, tags) }
func (l serverLogger) Panic(msg string, tags ...tag.Tag)  { l.log(slog.LevelError, msg, tags) }
func (l serverLogger) Fatal(msg string, tags ...tag.Tag)  { l.log(slog.LevelError, msg, tags) }

func (l serverLogger) log(level slog.Level, msg string, tags []tag.Tag) {
	if l.quiet != nil && l.quiet.Load() {
		level = min(level, slog.LevelDebug)
	} else if level == slog.LevelWarn {
		for _, prefix := range benignWarnings {
			if strings.HasPrefix(msg, prefix) {
				level = slog.LevelInfo
				break
			}
		}
	}
	ctx := context.Background()
	if !l.sl.Enabled(ctx, level) {
		return
	}
	attrs := make([]slog.Attr, 0, len(tags))
	for _, t := range tags {
		attrs = append(attrs, slog.Any(t.Key(), t.Value()))
	}
	l.sl.LogAttrs(ctx, level, msg, attrs...)
}
