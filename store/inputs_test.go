package store_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// An accepted change of inputs is the next version, naming what it set and
// removed; a change that changes nothing, none; a change made against an
// older version, or while another operation holds the install, is refused.
func TestUpdateInputsVersions(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		change := store.InputsChange{Version: 1, Set: []store.InstallInput{{Name: "password", Value: "pw", Sensitive: true}},
			Remove: []string{"region"}}
		v, err := f.s.UpdateInputs(ctx, f.org.ID, f.inst.ID, change)
		if err != nil || v == nil || v.Version != 2 || !slices.Equal(v.Set, []string{"password"}) || !slices.Equal(v.Removed, []string{"region"}) {
			t.Fatalf("update = %+v, %v", v, err)
		}
		inst, _ := f.s.GetInstall(ctx, f.org.ID, f.inst.ID)
		if inst.InputsVersion != 2 || len(inst.Inputs) != 1 || inst.Inputs[0].Name != "password" {
			t.Fatalf("install after the update: %+v", inst)
		}
		if _, err := f.s.UpdateInputs(ctx, f.org.ID, f.inst.ID, change); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("a change against version 1 = %v, want a conflict", err)
		}
		change.Version = 2
		if v, err := f.s.UpdateInputs(ctx, f.org.ID, f.inst.ID, change); err != nil || v != nil {
			t.Fatalf("a change that changes nothing = %+v, %v", v, err)
		}
		op, err := f.s.StartOperation(ctx, store.InstallOperation{OrgID: f.org.ID, InstallID: f.inst.ID, Kind: store.OpUpdateInputs,
			ApprovalMode: status.ApproveAll, WorkflowID: "wf"})
		if err != nil {
			t.Fatal(err)
		}
		change.Set[0].Value = "pw2"
		if _, err := f.s.UpdateInputs(ctx, f.org.ID, f.inst.ID, change); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("a change while an operation runs = %v, want a conflict", err)
		}
		change.Operation = op.ID
		if v, err := f.s.UpdateInputs(ctx, f.org.ID, f.inst.ID, change); err != nil || v == nil || v.Version != 3 {
			t.Fatalf("the change of the operation that holds the install = %+v, %v", v, err)
		}
		versions, err := f.s.ListInputVersions(ctx, f.org.ID, f.inst.ID)
		if err != nil || len(versions) != 3 || versions[0].Version != 3 || versions[2].Version != 1 {
			t.Fatalf("versions = %+v, %v", versions, err)
		}
	})
}
