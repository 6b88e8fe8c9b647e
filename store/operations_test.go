package store_test

import (
	"context"
	"testing"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// An install runs the config version of its last provision, reprovision
// or deploy_config that succeeded: one that failed, was plan-only, or of
// another kind leaves it where it was.
func TestInstallConfigVersion(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		for _, tc := range []struct {
			kind     string
			version  int
			planOnly bool
			ends     status.Op
			want     int
		}{
			{store.OpProvision, 1, false, status.OpSucceeded, 1},
			{store.OpDeployConfig, 3, true, status.OpSucceeded, 1},
			{store.OpDeployConfig, 3, false, status.OpFailed, 1},
			{store.OpDeployComponent, 4, false, status.OpSucceeded, 1},
			{store.OpDeployConfig, 3, false, status.OpSucceeded, 3},
			{store.OpReprovision, 2, false, status.OpSucceeded, 2},
		} {
			op, err := f.s.StartOperation(ctx, store.InstallOperation{OrgID: f.org.ID, InstallID: f.inst.ID, Kind: tc.kind,
				ConfigVersion: tc.version, PlanOnly: tc.planOnly, ApprovalMode: status.ApproveAll, WorkflowID: "wf"})
			if err != nil {
				t.Fatal(err)
			}
			if err := f.s.FinishOperation(ctx, op.ID, tc.ends, "", status.InstallActive); err != nil {
				t.Fatal(err)
			}
			if inst, err := f.s.GetInstall(ctx, f.org.ID, f.inst.ID); err != nil || inst.ConfigVersion != tc.want {
				t.Fatalf("after a %s of version %d (plan only %v) that ended %s: install at version %d (%v), want %d",
					tc.kind, tc.version, tc.planOnly, tc.ends, inst.ConfigVersion, err, tc.want)
			}
		}
	})
}
