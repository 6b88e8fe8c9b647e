package api

import (
	"context"
	"slices"
	"testing"

	"github.com/outpost-dev/outpost/contract/status"
)

// An approval is recorded on the step before the signal is sent (the
// workflow applies only what the store says approved); approving again
// re-sends the signal, a denial after it is a conflict.
func TestApprovalIsRecordedBeforeTheSignal(t *testing.T) {
	e := newTestEnv(t)
	app, inst := e.fixture()
	e.syncConfig(app.ID, exampleFiles(t), 201)
	op := e.waitingStep(inst.ID)
	steps := "/v1/installs/" + inst.ID + "/operations/" + op.ID + "/steps/" + status.SandboxStep
	e.call("POST", steps+"/approve", nil, 202, nil)
	got, err := e.store.StepDecision(context.Background(), op.ID, status.SandboxStep)
	if err != nil || got != status.DecisionApproved {
		t.Fatalf("decision recorded: %q, %v; want approved", got, err)
	}
	e.call("POST", steps+"/approve", nil, 202, nil)
	e.call("POST", steps+"/deny", nil, 409, nil)
	if want := []string{op.WorkflowID + " sandbox true", op.WorkflowID + " sandbox true"}; !slices.Equal(e.ops.decisions, want) {
		t.Fatalf("decisions signalled: %v, want %v", e.ops.decisions, want)
	}
}
