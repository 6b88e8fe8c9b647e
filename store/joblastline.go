package store

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/outpost-dev/outpost/protocol"
)

// lastLineChunks is how many of a job's last output chunks LastLogLine reads.
const lastLineChunks = 20

// LastLogLine is the last non-empty line a job's program wrote (stdout or
// stderr, its last attempt; the runner's own lines aside), at most max
// bytes; "" when it wrote none.
func (s *Store) LastLogLine(ctx context.Context, jobID string, max int) (string, error) {
	chunks, err := list[JobLogChunk](s.db.WithContext(ctx).Limit(lastLineChunks), "attempt DESC, seq DESC",
		"job_id = ? AND stream IN ? AND NOT sealed", jobID, []string{protocol.StreamStdout, protocol.StreamStderr})
	if err != nil {
		return "", fmt.Errorf("store: last log line of job %s: %w", jobID, err)
	}
	var text strings.Builder
	for i := len(chunks) - 1; i >= 0; i-- {
		if chunks[i].Attempt == chunks[0].Attempt {
			text.WriteString(chunks[i].Data)
		}
	}
	lines := strings.Split(strings.TrimSpace(text.String()), "\n")
	line := strings.TrimSpace(lines[len(lines)-1])
	if len(line) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(line[cut]) {
			cut-- // never inside a character: PostgreSQL refuses text that is not UTF-8
		}
		line = line[:cut] + "…"
	}
	return line, nil
}
