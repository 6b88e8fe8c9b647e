package runner

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestRecentLogKeepsTheTailInWholeLines(t *testing.T) {
	recent := &recentLog{max: 200}
	var out bytes.Buffer
	log := slog.New(teeHandler{slog.NewTextHandler(&out, nil), slog.NewTextHandler(recent, nil)})
	for i := range 50 {
		log.Info("line", "n", i)
	}
	got := string(recent.snapshot())
	if len(got) > 200 || !strings.Contains(got, "n=49\n") || strings.Contains(got, "n=1\n") {
		t.Fatalf("recent log (%d bytes) is not the tail:\n%s", len(got), got)
	}
	if !strings.HasPrefix(got, "time=") {
		t.Fatalf("recent log starts mid-line: %q", got)
	}
	if !strings.Contains(out.String(), fmt.Sprintf("n=%d\n", 1)) {
		t.Fatal("the runner's own log lost lines")
	}
}
