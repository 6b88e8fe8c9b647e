package workflows

import (
	"context"
	"slices"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
)

// operationWorkflows are the install operations' workflows, each running
// runOperation.
var operationWorkflows = map[string]func(workflow.Context, contract.OperationInput) (contract.OperationResult, error){
	contract.WorkflowProvisionInstall:   ProvisionInstall,
	contract.WorkflowDeprovisionInstall: DeprovisionInstall,
	contract.WorkflowReprovisionInstall: ReprovisionInstall,
	contract.WorkflowDeployComponent:    DeployComponent,
	contract.WorkflowTeardownComponent:  TeardownComponent,
	contract.WorkflowUpdateInputs:       UpdateInputs,
	contract.WorkflowDeployConfig:       DeployConfig,
	contract.WorkflowReconcileDrift:     ReconcileDrift,
}

// Each operation's workflow runs its plan's steps and finishes the
// operation with the install status the plan gives for success.
func TestEachOperationWorkflowRunsItsPlan(t *testing.T) {
	for name, wf := range operationWorkflows {
		t.Run(name, func(t *testing.T) {
			f := newFakeInstall(t, contract.OperationPlan{ApprovalMode: status.ApproveAll, Steps: steps("sandbox")})
			f.env.ExecuteWorkflow(wf, contract.OperationInput{OperationID: "op_1"})
			var res contract.OperationResult
			if err := f.env.GetWorkflowResult(&res); err != nil {
				t.Fatal(err)
			}
			f.env.AssertExpectations(t)
			f.wantSteps(res, allSucceeded("sandbox"))
			f.wantFinished(status.OpSucceeded, "", "active")
		})
	}
}

// An operation whose BeginOperation fails — for good, or the database away
// past the local activity's limit — is finished, failed, saying why, and
// frees the install; the install's status is left as it was.
func TestOperationBeginFailureFinishesTheOperation(t *testing.T) {
	for msg, retryable := range map[string]bool{
		`the app config (version 2) has no component "nope"`:   false,
		"dial tcp 127.0.0.1:5432: connect: connection refused": true, // its attempts over
	} {
		begin := temporal.NewApplicationErrorWithOptions(msg, "InvalidOperation", temporal.ApplicationErrorOptions{NonRetryable: !retryable})
		env := newEnv()
		registerActivities(env)
		env.OnActivity(contract.BeginOperation, mockAny, "op_1").Return(contract.OperationPlan{}, begin)
		var finished []string
		env.OnActivity(contract.FinishOperation, mockAny, "op_1", mockAny, mockAny, mockAny).Return(func(_ context.Context, _ string, outcome status.Op, msg string, inst status.Install) error {
			finished = []string{string(outcome), msg, string(inst)}
			return nil
		})
		env.ExecuteWorkflow(DeployComponent, contract.OperationInput{OperationID: "op_1"})
		if err := env.GetWorkflowError(); err == nil || !strings.Contains(err.Error(), msg) {
			t.Fatalf("workflow error %v; want BeginOperation's", err)
		}
		env.AssertExpectations(t)
		if want := []string{"failed", "beginning the operation: " + msg, ""}; !slices.Equal(finished, want) {
			t.Fatalf("BeginOperation failed with %q: FinishOperation%q, want %q", msg, finished, want)
		}
	}
}

// A step status the store did not take is logged, and said in the
// operation's result and the error it is finished with.
func TestOperationSaysWhatItCouldNotRecord(t *testing.T) {
	f := newFakeInstall(t, contract.OperationPlan{ApprovalMode: status.ApproveAll, Steps: steps("sandbox", "web<sandbox")})
	f.statusErr = func(step string, outcome status.Step) error {
		if step == "web" && outcome == status.StepSucceeded {
			return temporal.NewNonRetryableApplicationError("database is down", "Unavailable", nil)
		}
		return nil
	}
	res := f.run()
	want := "not recorded: step web's status succeeded (database is down)"
	if err := f.env.GetWorkflowError(); err != nil || res.Status != status.OpSucceeded || res.Error != want {
		t.Fatalf("result %+v, error %v; want succeeded, saying %q", res, err, want)
	}
	f.wantFinished(status.OpSucceeded, want, "active")
}
