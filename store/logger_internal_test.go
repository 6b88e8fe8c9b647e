package store

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"gorm.io/gorm"
)

// A statement the log will not show is not rendered: its SQL (with gorm's
// rendering of every value) is asked for only when it is logged.
func TestQuietLoggerRendersOnlyWhatItLogs(t *testing.T) {
	q := newQuietLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, c := range []struct {
		name   string
		begin  time.Time
		err    error
		logged bool
	}{
		{"succeeded", time.Now(), nil, false},
		{"not found", time.Now(), gorm.ErrRecordNotFound, false},
		{"duplicate", time.Now(), gorm.ErrDuplicatedKey, false},
		{"cancelled", time.Now(), context.Canceled, false},
		{"failed", time.Now(), errors.New("ERROR: relation does not exist"), true},
		{"slow", time.Now().Add(-2 * slowStatement), nil, true},
	} {
		rendered := false
		q.Trace(context.Background(), c.begin, func() (string, int64) { rendered = true; return "SELECT 1", 1 }, c.err)
		if rendered != c.logged {
			t.Errorf("%s: rendered %v, want %v", c.name, rendered, c.logged)
		}
	}
}
