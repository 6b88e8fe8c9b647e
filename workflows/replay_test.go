package workflows_test

import (
	"path/filepath"
	"testing"

	sdkworker "go.temporal.io/sdk/worker"

	"github.com/outpost-dev/outpost/worker"
)

// TestCommittedHistoriesReplay replays every history committed under
// testdata/histories on today's workflow code, registered as the worker
// registers it. A history recorded from released code keeps a change to
// that code honest: the change must be gated with workflow.GetVersion so
// that the old history still replays (docs/architecture/temporal.md,
// "Workflow versions"). Record one with OUTPOST_RECORD_HISTORIES=<dir> on the e2e
// tests.
func TestCommittedHistoriesReplay(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "histories", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no histories under testdata/histories")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			r := sdkworker.NewWorkflowReplayer()
			worker.RegisterWorkflows(r)
			if err := r.ReplayWorkflowHistoryFromJSONFile(nil, file); err != nil {
				t.Fatalf("replaying %s: %v", file, err)
			}
		})
	}
}
