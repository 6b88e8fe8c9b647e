package store_test

import (
	"context"
	"testing"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// A runner's update waiting for its customer is listed while it is the
// runner's latest, on both databases; a later update takes its place.
func TestAvailableRunnerUpdatesAreTheLatest(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		update := func(id string) {
			t.Helper()
			_, err := f.s.CreateRunnerUpdate(ctx, store.RunnerUpdate{ID: id, OrgID: f.org.ID, InstallID: f.inst.ID,
				RunnerID: f.runner.ID, Version: "v2", Digest: "sha256:aa", WorkflowID: "wf-" + id})
			if err != nil {
				t.Fatal(err)
			}
		}
		available := func() map[string]store.RunnerUpdate {
			t.Helper()
			got, err := f.s.AvailableRunnerUpdates(ctx, f.org.ID)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		update("rup_1")
		if err := f.s.FinishRunnerUpdate(ctx, "rup_1", status.RunnerUpdateAvailable, "waits for the customer"); err != nil {
			t.Fatal(err)
		}
		if got := available(); len(got) != 1 || got[f.runner.ID].ID != "rup_1" {
			t.Fatalf("available: %+v, want rup_1 for the runner", got)
		}
		update("rup_2")
		if got := available(); len(got) != 0 {
			t.Fatalf("available after a later update: %+v, want none", got)
		}
	})
}
