package workflows

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
)

// runbookRecord is what a runbook run's mocked activities and children saw.
type runbookRecord struct {
	mu       sync.Mutex
	begun    []int
	children []string // "ActionRun act_0", "DeployComponent op_1"
	ends     map[int]string
	runEnd   status.Job
	runError string
	at       map[string]time.Duration // when a step began, since the start
	approved bool                     // the store says the gate is approved
	block    bool                     // the children run until cancelled
}

// child records a child workflow, and when r.block, runs it until it is
// cancelled (recorded "cancelled <name>").
func (r *runbookRecord) child(ctx workflow.Context, name string) error {
	r.note(func() { r.children = append(r.children, name) })
	if !r.block {
		return nil
	}
	err := workflow.Await(ctx, func() bool { return false })
	r.note(func() { r.children = append(r.children, "cancelled "+name) })
	return err
}

func (r *runbookRecord) note(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f()
}

// runbookEnv runs migrate (action) → api (deploy) → gate (approval) →
// check (action); done marks steps that already succeeded, fail the steps
// whose action run or operation the store says failed, and locked a step
// whose operation cannot start.
func runbookEnv(t *testing.T, done, fail map[int]bool, locked int) (*testsuite.TestWorkflowEnvironment, *runbookRecord) {
	env := newEnv()
	registerActivities(env)
	env.RegisterWorkflow(RunbookRun)
	rec := &runbookRecord{ends: map[int]string{}, at: map[string]time.Duration{}}
	var began time.Time
	kinds := []string{"action", "deploy", "approval", "action"}
	names := []string{"migrate", "api", "gate", "check"}
	plan := contract.RunbookRunPlan{RunID: "rbr_1", InstallID: "ins_1", GateWaitMS: int64(48 * time.Hour / time.Millisecond)}
	for i := range kinds {
		plan.Steps = append(plan.Steps, contract.RunbookStepPlan{Index: i, Name: names[i], Kind: kinds[i], Done: done[i]})
	}
	env.OnActivity(contract.LoadRunbookRun, mockAny, "rbr_1").Return(func(ctx context.Context, _ string) (contract.RunbookRunPlan, error) {
		began = env.Now()
		return plan, nil
	})
	env.OnActivity(contract.BeginRunbookStep, mockAny, "rbr_1", mockAny).Return(func(_ context.Context, _ string, i int) (contract.RunbookStepStart, error) {
		rec.note(func() { rec.begun = append(rec.begun, i); rec.at[names[i]] = env.Now().Sub(began) })
		switch {
		case i == locked:
			return contract.RunbookStepStart{Failed: "deploy_component not started: install one is busy with operation op_9"}, nil
		case kinds[i] == "action":
			return contract.RunbookStepStart{Workflow: contract.WorkflowActionRun, WorkflowID: "install/ins_1/action/" + names[i] + "/act",
				ActionRunID: fmt.Sprintf("act_%d", i), Action: names[i], InstallID: "ins_1"}, nil
		case kinds[i] == "deploy":
			return contract.RunbookStepStart{Workflow: contract.WorkflowDeployComponent, WorkflowID: "install/ins_1/deploy_component/api",
				OperationID: fmt.Sprintf("op_%d", i)}, nil
		}
		return contract.RunbookStepStart{}, nil
	})
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context, in contract.ActionRunInput) (contract.ActionRunResult, error) {
		return contract.ActionRunResult{RunID: in.RunID}, rec.child(ctx, "ActionRun "+in.RunID)
	}, workflow.RegisterOptions{Name: contract.WorkflowActionRun})
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context, in contract.OperationInput) (contract.OperationResult, error) {
		return contract.OperationResult{}, rec.child(ctx, "DeployComponent "+in.OperationID)
	}, workflow.RegisterOptions{Name: contract.WorkflowDeployComponent})
	env.OnActivity(contract.FinishRunbookStep, mockAny, "rbr_1", mockAny, mockAny).Return(
		func(_ context.Context, _ string, i int, why string) (contract.RunbookStepEnd, error) {
			end := contract.RunbookStepEnd{Status: string(status.JobSucceeded)}
			switch {
			case why == contract.RunbookStepCancelled:
				end = contract.RunbookStepEnd{Status: string(status.JobCancelled), Error: why}
			case why != "":
				end = contract.RunbookStepEnd{Status: string(status.JobFailed), Error: why}
			case i == locked:
				end = contract.RunbookStepEnd{Status: string(status.JobFailed), Error: "locked"}
			case fail[i]:
				end = contract.RunbookStepEnd{Status: string(status.JobFailed), Error: fmt.Sprintf("action run act_%d failed: exit code 1", i)}
			}
			rec.note(func() { rec.ends[i] = end.Status })
			return end, nil
		})
	env.OnActivity(contract.RunbookGateApproved, mockAny, "rbr_1", 2).Return(func(context.Context, string, int) (bool, error) {
		return rec.approved, nil
	})
	env.OnActivity(contract.FinishRunbookRun, mockAny, "rbr_1", mockAny, mockAny).Return(func(_ context.Context, _ string, st status.Job, why string) error {
		rec.note(func() { rec.runEnd, rec.runError = st, why })
		return nil
	})
	return env, rec
}

// approveAfter records the gate's approval (step 2) and signals it after d.
func approveAfter(env *testsuite.TestWorkflowEnvironment, rec *runbookRecord, d time.Duration) {
	env.RegisterDelayedCallback(func() {
		rec.note(func() { rec.approved = true })
		env.SignalWorkflow(contract.RunbookApproveSignal, contract.RunbookApproval{Step: 2})
	}, d)
}

func runbookResult(t *testing.T, env *testsuite.TestWorkflowEnvironment) contract.RunbookRunResult {
	t.Helper()
	return workflowResult[contract.RunbookRunResult](t, env)
}

func TestRunbookRunRunsEveryStepWaitingAtTheGate(t *testing.T) {
	env, rec := runbookEnv(t, nil, nil, -1)
	// Neither a signal for another step nor one the store has no approval
	// for (sent around the API) opens the gate.
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(contract.RunbookApproveSignal, contract.RunbookApproval{Step: 7})
	}, time.Hour)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(contract.RunbookApproveSignal, contract.RunbookApproval{Step: 2})
	}, 2*time.Hour)
	approveAfter(env, rec, 3*time.Hour)
	env.ExecuteWorkflow(RunbookRun, contract.RunbookRunInput{RunID: "rbr_1"})
	res := runbookResult(t, env)
	if res.Status != string(status.JobSucceeded) || rec.runEnd != status.JobSucceeded || rec.runError != "" {
		t.Fatalf("result %+v, run recorded %s %q", res, rec.runEnd, rec.runError)
	}
	if want := []string{"ActionRun act_0", "DeployComponent op_1", "ActionRun act_3"}; !reflect.DeepEqual(rec.children, want) {
		t.Errorf("children %v, want %v", rec.children, want)
	}
	if !reflect.DeepEqual(rec.begun, []int{0, 1, 2, 3}) || len(rec.ends) != 4 {
		t.Errorf("begun %v, ended %v", rec.begun, rec.ends)
	}
	if rec.at["check"] < 3*time.Hour {
		t.Errorf("check began %s after the start: before the gate was approved (3h)", rec.at["check"])
	}
}

func TestRunbookRunStopsAtAFailedStep(t *testing.T) {
	env, rec := runbookEnv(t, nil, map[int]bool{1: true}, -1)
	env.ExecuteWorkflow(RunbookRun, contract.RunbookRunInput{RunID: "rbr_1"})
	res := runbookResult(t, env)
	if res.Status != string(status.JobFailed) || rec.runEnd != status.JobFailed || rec.runError != "step api: action run act_1 failed: exit code 1" {
		t.Fatalf("result %+v, run recorded %s %q", res, rec.runEnd, rec.runError)
	}
	if !reflect.DeepEqual(rec.begun, []int{0, 1}) {
		t.Errorf("begun %v: the gate and check must not start after api failed", rec.begun)
	}
}

// A resumed run starts again under the same ID: the steps that succeeded
// are not run again.
func TestResumedRunbookRunStartsAtTheFailedStep(t *testing.T) {
	env, rec := runbookEnv(t, map[int]bool{0: true, 1: true, 2: true}, nil, -1)
	env.ExecuteWorkflow(RunbookRun, contract.RunbookRunInput{RunID: "rbr_1"})
	res := runbookResult(t, env)
	if res.Status != string(status.JobSucceeded) || !reflect.DeepEqual(rec.begun, []int{3}) ||
		!reflect.DeepEqual(rec.children, []string{"ActionRun act_3"}) {
		t.Fatalf("result %+v, begun %v, children %v; want only check", res, rec.begun, rec.children)
	}
}

func TestRunbookStepOnALockedInstallFails(t *testing.T) {
	env, rec := runbookEnv(t, nil, nil, 1)
	env.ExecuteWorkflow(RunbookRun, contract.RunbookRunInput{RunID: "rbr_1"})
	res := runbookResult(t, env)
	want := "step api: deploy_component not started: install one is busy with operation op_9"
	if res.Status != string(status.JobFailed) || rec.runError != want {
		t.Fatalf("result %+v, run error %q, want %q", res, rec.runError, want)
	}
	if !reflect.DeepEqual(rec.children, []string{"ActionRun act_0"}) {
		t.Errorf("children %v: no operation may run on a locked install", rec.children)
	}
}

func TestRunbookGateThatIsNotApprovedFails(t *testing.T) {
	env, rec := runbookEnv(t, nil, nil, -1)
	env.ExecuteWorkflow(RunbookRun, contract.RunbookRunInput{RunID: "rbr_1"})
	res := runbookResult(t, env)
	if res.Status != string(status.JobFailed) || rec.runError != "step gate: not approved within 48h0m0s" || rec.ends[2] != string(status.JobFailed) {
		t.Fatalf("result %+v, run error %q, ends %v", res, rec.runError, rec.ends)
	}
	if len(rec.begun) != 3 {
		t.Errorf("begun %v: check must not start", rec.begun)
	}
}

func TestCancellingARunbookRunAtTheGateRecordsItCancelled(t *testing.T) {
	env, rec := runbookEnv(t, nil, nil, -1)
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Hour)
	env.ExecuteWorkflow(RunbookRun, contract.RunbookRunInput{RunID: "rbr_1"})
	if rec.runEnd != status.JobCancelled || rec.ends[2] != string(status.JobCancelled) || len(rec.begun) != 3 {
		t.Fatalf("run %s, ends %v, begun %v", rec.runEnd, rec.ends, rec.begun)
	}
}

// Cancelling a run while its action step or its deploy step runs asks that
// child workflow to cancel; the step ends cancelled, no later step begins,
// and the run ends cancelled.
func TestCancellingARunbookRunCancelsItsRunningStep(t *testing.T) {
	for _, tc := range []struct {
		name  string
		done  map[int]bool
		step  int
		child string
	}{
		{"action", nil, 0, "ActionRun act_0"},
		{"deploy", map[int]bool{0: true}, 1, "DeployComponent op_1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, rec := runbookEnv(t, tc.done, nil, -1)
			rec.block = true
			env.RegisterDelayedCallback(env.CancelWorkflow, time.Minute)
			env.ExecuteWorkflow(RunbookRun, contract.RunbookRunInput{RunID: "rbr_1"})
			if rec.runEnd != status.JobCancelled || rec.runError != "cancelled" {
				t.Fatalf("run %s %q, want cancelled", rec.runEnd, rec.runError)
			}
			if !reflect.DeepEqual(rec.begun, []int{tc.step}) || rec.ends[tc.step] != string(status.JobCancelled) {
				t.Errorf("begun %v, ends %v: step %d must end cancelled, none after it begin", rec.begun, rec.ends, tc.step)
			}
			if !reflect.DeepEqual(rec.children, []string{tc.child, "cancelled " + tc.child}) {
				t.Errorf("children %v: %s must be cancelled", rec.children, tc.child)
			}
		})
	}
}
