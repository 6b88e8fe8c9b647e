package activities

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

// A plan_apply job that found nothing to do records the step's outputs from
// its state all the same: the attempt before it, lost after it applied (its
// completion never delivered: the runner cut off from the gateway), left
// them there unrecorded, and the steps after it render their inputs from
// them. Before, the next step failed: `component "network" has no output`.
func TestUnchangedPlanApplyRecordsOutputsFromState(t *testing.T) {
	ctx := context.Background()
	s, tn := storetest.PostgresTenant(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	op, err := s.StartOperation(ctx, store.InstallOperation{OrgID: tn.Org.ID, InstallID: tn.Install.ID, Kind: store.OpProvision,
		ApprovalMode: status.ApproveAll})
	must(err)
	must(s.AddSteps(ctx, op.ID, []store.NewStep{{Name: "network"}}))

	// The state as the lost attempt's apply left it.
	tok := store.NewStateToken()
	job, _, err := s.EnqueueJob(ctx, store.JobSpec{Key: "wf/network", OrgID: tn.Org.ID, RunnerID: tn.Runner.ID,
		InstallID: &tn.Install.ID, Type: protocol.JobTypeTerraform, Manifest: json.RawMessage(`{}`),
		Workspace: Workspace(tn.Install.ID, "network"), StateToken: tok})
	must(err)
	_, err = s.ClaimJob(ctx, tn.Runner.ID, time.Minute, store.Claimant{})
	must(err)
	access, err := s.AuthenticateState(ctx, job.ID, tok)
	must(err)
	state := `{"version":4,"serial":1,"lineage":"l","outputs":{"cidr":{"value":"10.0.1.0/24","type":"string"}},"resources":[]}`
	_, _, err = s.PutTerraformState(ctx, access, "", []byte(state))
	must(err)
	// The attempt that completed: no changes, nothing applied.
	must(s.CompleteJob(ctx, tn.Runner.ID, job.ID, protocol.CompleteRequest{Attempt: 1, Status: protocol.StatusSucceeded,
		Outputs: json.RawMessage(`{"plan":{"has_changes":false},"applied":false}`)}))

	sum, err := domain[*Terraform](t, Deps{Store: s}).RecordPlanApply(ctx, op.ID, "network", job.ID)
	must(err)
	if sum.Applied || sum.HasChanges || sum.Failed {
		t.Errorf("summary %+v, want unchanged", sum)
	}
	outs, err := s.ListOutputs(ctx, tn.Install.ID)
	must(err)
	if !strings.Contains(outs["network"], "10.0.1.0/24") {
		t.Fatalf("network's outputs %q, want the state's", outs["network"])
	}
}

// domain is the activities of type T among those New builds.
func domain[T any](t *testing.T, d Deps) T {
	for _, a := range New(d) {
		if x, ok := a.(T); ok {
			return x
		}
	}
	var zero T
	t.Fatalf("New builds no %T", zero)
	return zero
}
