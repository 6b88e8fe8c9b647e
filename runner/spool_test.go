package runner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/outpost-dev/outpost/protocol"
)

// TestSpoolReplacesNUL: a NUL in a job's output (a binary printed) is
// spooled as U+FFFD, since the gateway refuses text holding one.
func TestSpoolReplacesNUL(t *testing.T) {
	path := filepath.Join(t.TempDir(), spoolFile)
	sp, err := createSpool(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sp.Append(protocol.StreamStdout, "ELF\x00\x01 done\n"); err != nil {
		t.Fatal(err)
	}
	sp.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c protocol.LogChunk
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	if want := "ELF\uFFFD\x01 done\n"; c.Data != want {
		t.Fatalf("spooled %q, want %q", c.Data, want)
	}
}
