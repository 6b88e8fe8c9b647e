package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
)

// A runner last seen in the span is listed while its install lives, and not
// once the install is deprovisioned (no runner.offline for it).
func TestRunnersLastSeenBetweenSkipsDeprovisionedInstalls(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		now := time.Now().UTC()
		if err := f.s.TouchRunners(ctx, []string{f.runner.ID}, now.Add(-10*time.Minute)); err != nil {
			t.Fatal(err)
		}
		listed := func() int {
			t.Helper()
			rs, err := f.s.RunnersLastSeenBetween(ctx, f.org.ID, now.Add(-time.Hour), now.Add(-5*time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			return len(rs)
		}
		if n := listed(); n != 1 {
			t.Fatalf("%d runners listed, want the install's runner", n)
		}
		if err := f.s.SetInstallStatus(ctx, f.inst.ID, status.InstallDeprovisioned); err != nil {
			t.Fatal(err)
		}
		if n := listed(); n != 0 {
			t.Fatalf("%d runners listed after the install was deprovisioned, want none", n)
		}
	})
}
