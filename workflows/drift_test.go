package workflows

import (
	"context"
	"slices"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
)

// driftEnv runs DriftCheck on an install with a sandbox and a "web"
// terraform component, each plan a job that succeeds; recorded collects
// the step statuses written and finished FinishOperation's arguments.
type driftEnv struct {
	*fakeInstall
}

func newDriftEnv(t *testing.T) *driftEnv {
	f := &fakeInstall{t: t, env: newEnv(), statuses: map[string][]status.Step{}, messages: map[string]string{}}
	registerActivities(f.env)
	f.env.RegisterWorkflow(DriftCheck)
	f.plan = contract.OperationPlan{InstallID: "ins_1", Kind: contract.OpDriftCheck, Steps: steps("sandbox", "web<sandbox")}
	f.mockOperation()
	f.env.OnActivity(contract.EnqueueTerraformJob, mockAny, mockAny).Return(func(_ context.Context, in contract.TerraformJobInput) (contract.JobRef, error) {
		if in.Operation != protocol.TerraformPlan || !in.NoLock {
			t.Errorf("%s's drift job: %+v, want a plan without the state lock", in.Step, in)
		}
		return contract.JobRef{JobID: in.Step + "/drift", Created: true}, nil
	})
	return &driftEnv{f}
}

// A scheduled check records its operation, plans every step without the
// state lock, records each drifted or not, and finishes, leaving the
// install's status as it is.
func TestDriftCheckRecordsEachStep(t *testing.T) {
	d := newDriftEnv(t)
	d.env.OnActivity(contract.BeginDriftCheck, mockAny, "ins_1", mockAny).Return("op_1", nil)
	d.env.OnActivity(contract.RecordDrift, mockAny, "op_1", mockAny, mockAny).Return(func(_ context.Context, _, step, _ string) (contract.PlanSummary, error) {
		return contract.PlanSummary{HasChanges: step == "web"}, nil
	})
	d.env.ExecuteWorkflow(DriftCheck, contract.OperationInput{InstallID: "ins_1"})
	var res contract.OperationResult
	if err := d.env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	d.env.AssertExpectations(t)
	d.wantSteps(res, map[string]status.Step{"sandbox": status.StepNoChanges, "web": status.StepDrifted})
	d.wantFinished(status.OpSucceeded, "", "")
}

// A step status the store did not take is logged and said in the check's
// result, the check going on.
func TestDriftCheckSaysWhatItCouldNotRecord(t *testing.T) {
	d := newDriftEnv(t)
	d.env.OnActivity(contract.RecordDrift, mockAny, "op_1", mockAny, mockAny).Return(contract.PlanSummary{}, nil)
	d.statusErr = func(step string, _ status.Step) error {
		if step == "web" {
			return temporal.NewNonRetryableApplicationError("database is down", "Unavailable", nil)
		}
		return nil
	}
	d.env.ExecuteWorkflow(DriftCheck, contract.OperationInput{OperationID: "op_1"})
	var res contract.OperationResult
	if err := d.env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	d.env.AssertExpectations(t)
	want := "not recorded: step web's status no_changes (database is down)"
	if res.Status != status.OpSucceeded || res.Error != want {
		t.Fatalf("result %+v; want succeeded, saying %q", res, want)
	}
	d.wantFinished(status.OpSucceeded, want, "")
}

// A check whose BeginOperation fails for good finishes its operation,
// failed, saying why.
func TestDriftCheckBeginFailureFinishesItsOperation(t *testing.T) {
	env := newEnv()
	registerActivities(env)
	env.OnActivity(contract.BeginOperation, mockAny, "op_1").Return(contract.OperationPlan{},
		temporal.NewNonRetryableApplicationError("install ins_1 not found", "NotFound", nil))
	var finished []string
	env.OnActivity(contract.FinishOperation, mockAny, "op_1", mockAny, mockAny, mockAny).Return(func(_ context.Context, _ string, outcome status.Op, msg string, inst status.Install) error {
		finished = []string{string(outcome), msg, string(inst)}
		return nil
	})
	env.ExecuteWorkflow(DriftCheck, contract.OperationInput{OperationID: "op_1"})
	if err := env.GetWorkflowError(); err == nil || !strings.Contains(err.Error(), "install ins_1 not found") {
		t.Fatalf("workflow error %v; want BeginOperation's", err)
	}
	env.AssertExpectations(t)
	if want := []string{"failed", "beginning the operation: install ins_1 not found", ""}; !slices.Equal(finished, want) {
		t.Fatalf("FinishOperation%q, want %q", finished, want)
	}
}
