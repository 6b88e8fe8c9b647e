package runner

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/protocol"
)

// A job that replaces its log spool's path (in its own directory) with a
// link to another file of log lines, once the spool exists, does not make
// the runner ship that file: the shipper reads the spool it created.
func TestShipperReadsTheSpoolNotWhatItsPathBecame(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, spoolFile)
	sp, err := createSpool(path)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other.jsonl")
	if err := os.WriteFile(other, []byte(`{"seq":1,"stream":"stdout","data":"someone else's secret\n"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, path); err != nil {
		t.Fatal(err)
	}
	if _, err := sp.Append(protocol.StreamStdout, "the job's own line\n"); err != nil {
		t.Fatal(err)
	}
	if err := sp.Close(); err != nil {
		t.Fatal(err)
	}
	sender := recordingSender{batches: make(chan []protocol.LogChunk, 10)}
	sh := &shipper{spool: sp, sender: sender, jobID: "job-1", attempt: 1, retry: fastRetry, log: testLogger(t)}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // only a hang guard
	defer cancel()
	if err := sh.run(ctx); err != nil {
		t.Fatalf("shipping the spool: %v", err)
	}
	close(sender.batches)
	var got []string
	for b := range sender.batches {
		for _, c := range b {
			got = append(got, c.Data)
		}
	}
	if len(got) != 1 || got[0] != "the job's own line\n" {
		t.Fatalf("shipped %q, want the spool's one line", got)
	}
}
