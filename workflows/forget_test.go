package workflows

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// deprovisionSteps: web, then network, then the sandbox (a deprovision's
// reverse order), each destroying.
func deprovisionSteps() []contract.StepSpec {
	out := steps("web", "network<web", "sandbox<network")
	for i := range out {
		out[i].Destroy = true
	}
	return out
}

// mockLeaveBehind plays LeaveBehind: the step ends left_behind with one
// resource named after it; the steps it was called for are returned.
func (f *fakeInstall) mockLeaveBehind() *[]string {
	var called []string
	f.env.OnActivity(contract.LeaveBehind, mockAny, "op_1", mockAny, mockAny).Return(func(_ context.Context, _, step, why string) ([]string, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		called = append(called, step+": "+why)
		f.statuses[step] = append(f.statuses[step], status.StepLeftBehind)
		return []string{"terraform_data." + step}, nil
	})
	return &called
}

// A deprovision with forget whose destroys fail goes on: each step that
// could not destroy is left behind (what it left recorded), the steps after
// it run, and the operation succeeds, naming what was left behind.
func TestDeprovisionWithForgetLeavesFailedStepsBehind(t *testing.T) {
	f := newFakeInstall(t, contract.OperationPlan{Kind: store.OpDeprovision, ApprovalMode: status.ApproveAll,
		Forget: true, Steps: deprovisionSteps()})
	f.planned = func(step string, applied bool) contract.PlanSummary {
		if step == "network" || step == status.SandboxStep {
			return contract.PlanSummary{Failed: true, Error: "the account is gone"}
		}
		return contract.PlanSummary{HasChanges: true, Applied: applied}
	}
	called := f.mockLeaveBehind()
	res := f.run()
	if err := f.env.GetWorkflowError(); err != nil || res.Status != status.OpSucceeded {
		t.Fatalf("result %+v, error %v: want the deprovision with forget to succeed", res, err)
	}
	f.wantSteps(res, map[string]status.Step{"web": status.StepSucceeded, "network": status.StepLeftBehind,
		"sandbox": status.StepLeftBehind})
	want := map[string][]string{"network": {"terraform_data.network"}, "sandbox": {"terraform_data.sandbox"}}
	if !maps.EqualFunc(res.LeftBehind, want, slices.Equal) {
		t.Fatalf("left behind %v; want %v", res.LeftBehind, want)
	}
	if !slices.Equal(*called, []string{"network: the account is gone", "sandbox: the account is gone"}) {
		t.Fatalf("LeaveBehind calls %q", *called)
	}
	f.wantFinished(status.OpSucceeded, "", "active")
	f.env.AssertExpectations(t)
}

// Without forget the same deprovision fails at network, and the sandbox is
// skipped: nothing is left behind.
func TestDeprovisionWithoutForgetFails(t *testing.T) {
	f := newFakeInstall(t, contract.OperationPlan{Kind: store.OpDeprovision, ApprovalMode: status.ApproveAll, Steps: deprovisionSteps()})
	f.planned = func(step string, applied bool) contract.PlanSummary {
		if step == "network" {
			return contract.PlanSummary{Failed: true, Error: "the account is gone"}
		}
		return contract.PlanSummary{HasChanges: true, Applied: applied}
	}
	res := f.run()
	if err := f.env.GetWorkflowError(); err == nil || !strings.Contains(err.Error(), "network: the account is gone") {
		t.Fatalf("workflow error %v; want network's failure", err)
	}
	if res.LeftBehind != nil {
		t.Fatalf("left behind %v without forget", res.LeftBehind)
	}
	f.wantSteps(contract.OperationResult{Steps: f.final()}, map[string]status.Step{"web": status.StepSucceeded,
		"network": status.StepFailed, "sandbox": status.StepSkipped})
	f.wantFinished(status.OpFailed, "network: the account is gone", "failed")
}

// A deprovision with forget whose runner never comes leaves every step
// behind, and still lets the install go.
func TestDeprovisionWithForgetWithoutRunnerLeavesAllBehind(t *testing.T) {
	f := newFakeInstall(t, contract.OperationPlan{Kind: store.OpDeprovision, ApprovalMode: status.ApproveAll,
		Forget: true, Steps: deprovisionSteps()})
	f.runnerGone = temporal.NewNonRetryableApplicationError("the install's runner (rnr_1) did not come online within 10m0s", "RunnerOffline", nil)
	called := f.mockLeaveBehind()
	res := f.run()
	if err := f.env.GetWorkflowError(); err != nil || res.Status != status.OpSucceeded {
		t.Fatalf("result %+v, error %v", res, err)
	}
	f.wantSteps(res, map[string]status.Step{"web": status.StepLeftBehind, "network": status.StepLeftBehind,
		"sandbox": status.StepLeftBehind})
	if len(res.LeftBehind) != 3 || len(*called) != 3 || !strings.Contains((*called)[0], "did not come online") {
		t.Fatalf("left behind %v, LeaveBehind calls %q", res.LeftBehind, *called)
	}
	if len(f.jobs()) != 0 {
		t.Fatalf("jobs %q queued without a runner", f.jobs())
	}
	f.wantFinished(status.OpSucceeded, "", "active")
	// No job ran (checked above): AssertExpectations would want them.
}
