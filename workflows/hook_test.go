package workflows

import (
	"context"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// These tests run hook steps in the operation's DAG: each hook's action
// runs as a child ActionRun workflow (the real one) whose one step's job
// the fake install plays: "<action>/hook", failing when fails names the
// action.

// hook is a hook step: "before:migrate" (an operation's) or
// "after:warm:api" (a component's), after the given steps.
func hook(name, when string, continueOnFailure bool, after ...string) contract.StepSpec {
	trigger, action, _ := contract.ParseHookStep(name)
	parts := strings.Split(name, ":")
	h := &contract.Hook{Action: action, Trigger: trigger, When: when, ContinueOnFailure: continueOnFailure}
	if len(parts) == 3 {
		h.Component = parts[2]
	}
	return contract.StepSpec{Name: name, After: after, Hook: h}
}

// mockHooks plays the hooks' runs; fails names the actions whose step
// exits non-zero.
func (f *fakeInstall) mockHooks(fails ...string) { f.mockHookRuns("", fails...) }

// mockHookRuns is mockHooks, the runner's policy refusing action refused.
func (f *fakeInstall) mockHookRuns(refused string, fails ...string) {
	f.env.RegisterWorkflow(ActionRun)
	f.env.OnActivity(contract.RecordHookRun, mockAny, "op_1", mockAny).Return(func(_ context.Context, _, step string) (contract.ActionRunPlan, error) {
		_, action, _ := contract.ParseHookStep(step)
		if action == refused {
			return contract.ActionRunPlan{}, temporal.NewNonRetryableApplicationError(
				`the customer's runner does not allow action "`+action+`" (allowed: check)`, "ActionRefused", nil)
		}
		return contract.ActionRunPlan{RunID: "run-" + action, InstallID: "ins_1", Action: action, Steps: []string{"run"}, StepTimeoutMS: 1000}, nil
	}).Maybe()
	f.env.OnActivity(contract.LoadActionRun, mockAny, mockAny).Return(func(_ context.Context, runID string) (contract.ActionRunPlan, error) {
		action := strings.TrimPrefix(runID, "run-")
		return contract.ActionRunPlan{RunID: runID, InstallID: "ins_1", Action: action, Steps: []string{"run"}, StepTimeoutMS: 1000}, nil
	}).Maybe()
	f.env.OnActivity(contract.EnqueueActionStepJob, mockAny, mockAny, 0, mockAny).Return(func(_ context.Context, runID string, _ int, _ string) (contract.JobRef, error) {
		job := strings.TrimPrefix(runID, "run-") + "/hook"
		f.log("enqueue " + job)
		return contract.JobRef{JobID: job, Created: true}, nil
	}).Maybe()
	f.env.OnActivity(contract.FinishActionStep, mockAny, mockAny, 0, mockAny).Return(func(_ context.Context, runID string, _ int, res contract.JobResult) (status.Job, error) {
		for _, a := range fails {
			if runID == "run-"+a {
				return status.JobFailed, nil
			}
		}
		return res.Status, nil
	}).Maybe()
	f.env.OnActivity(contract.FinishActionRun, mockAny, mockAny, mockAny, mockAny).Return(nil).Maybe()
}

// hookPlan is a provision with an operation's before-hook, a sandbox, api
// after it, and the given after-hooks.
func hookPlan(before contract.StepSpec, after ...contract.StepSpec) contract.OperationPlan {
	st := steps("sandbox<"+before.Name, "api<sandbox,"+before.Name)
	return contract.OperationPlan{Kind: store.OpProvision, ApprovalMode: status.ApproveAll,
		Steps: append(append([]contract.StepSpec{before}, st...), after...)}
}

func TestFailingBeforeHookStopsTheOperation(t *testing.T) {
	f := newFakeInstall(t, hookPlan(hook("before:migrate", "", false)))
	f.mockHooks("migrate")
	f.run() // the workflow fails (no result); the store says why
	f.wantSteps(contract.OperationResult{Steps: f.final()}, map[string]status.Step{"before:migrate": status.StepFailed,
		"sandbox": status.StepSkipped, "api": status.StepSkipped})
	f.wantFinished(status.OpFailed, "before:migrate: action migrate (run run-migrate): step run failed", "failed")
	if jobs := f.jobs(); len(jobs) != 1 || jobs[0] != "migrate/hook" {
		t.Fatalf("jobs %q; want only the hook's", jobs)
	}
	if got := f.lastMessage("sandbox"); got != "skipped: before:migrate did not succeed" {
		t.Fatalf("sandbox's message %q; want it to name the hook", got)
	}
}

func TestBeforeHookWithContinueOnFailureLetsTheOperationGoOn(t *testing.T) {
	f := newFakeInstall(t, hookPlan(hook("before:migrate", "", true)))
	f.mockHooks("migrate")
	res := f.run()
	f.wantSteps(res, map[string]status.Step{"before:migrate": status.StepFailed, "sandbox": status.StepSucceeded, "api": status.StepSucceeded})
	f.wantFinished(status.OpSucceeded, "", "active")
	f.before("end migrate/hook", "enqueue sandbox/plan_apply")
}

func TestAfterHookRunsWhenItsStepsEndedSo(t *testing.T) {
	for _, c := range []struct {
		when    string
		apiFail bool
		want    status.Step
	}{
		{"success", false, status.StepSucceeded},
		{"success", true, status.StepSkipped},
		{"failure", false, status.StepSkipped},
		{"failure", true, status.StepSucceeded},
		{"always", false, status.StepSucceeded},
		{"always", true, status.StepSucceeded},
	} {
		t.Run(c.when, func(t *testing.T) {
			f := newFakeInstall(t, hookPlan(hook("before:migrate", "", false),
				hook("after:warm", c.when, false, "before:migrate", "sandbox", "api")))
			f.mockHooks()
			f.planned = func(step string, applied bool) contract.PlanSummary {
				if step == "api" && c.apiFail {
					return contract.PlanSummary{Failed: true, Error: "boom"}
				}
				return contract.PlanSummary{HasChanges: true, Applied: applied}
			}
			f.run()
			if got := f.final()["after:warm"]; got != c.want {
				t.Fatalf("after:warm %s; want %s (events %q)", got, c.want, f.events)
			}
			if wantOp := map[bool]string{false: "succeeded", true: "failed"}[c.apiFail]; f.finished[0] != wantOp {
				t.Fatalf("operation %q; want %s", f.finished, wantOp)
			}
			if c.want == status.StepSucceeded {
				f.before("end api/plan_apply", "enqueue warm/hook")
			}
		})
	}
}

// A component's hooks surround its step: the before-hook runs once the
// component's dependencies ended and before its job; the after-hook once
// it ended. A step after the component does not wait for its after-hook.
func TestComponentHooksSurroundTheirStep(t *testing.T) {
	st := steps("sandbox", "api<sandbox,before:migrate:api", "web<sandbox,api")
	plan := contract.OperationPlan{Kind: store.OpProvision, ApprovalMode: status.ApproveAll, Steps: []contract.StepSpec{
		st[0], hook("before:migrate:api", "", false, "sandbox"), st[1], hook("after:warm:api", "success", false, "api"), st[2]}}
	f := newFakeInstall(t, plan)
	f.mockHooks()
	res := f.run()
	f.wantSteps(res, allSucceeded("sandbox", "before:migrate:api", "api", "after:warm:api", "web"))
	f.before("end sandbox/plan_apply", "enqueue migrate/hook", "end migrate/hook", "enqueue api/sync", "enqueue api/plan_apply",
		"end api/plan_apply", "enqueue warm/hook")
	f.before("end api/plan_apply", "enqueue web/plan_apply")
}

// A component's after-hook does not run when the component did not: its
// before-hook failed.
func TestComponentAfterHookSkippedWhenTheComponentDidNotRun(t *testing.T) {
	st := steps("sandbox", "api<sandbox,before:migrate:api")
	plan := contract.OperationPlan{Kind: store.OpProvision, ApprovalMode: status.ApproveAll, Steps: []contract.StepSpec{
		st[0], hook("before:migrate:api", "", false, "sandbox"), st[1], hook("after:warm:api", "always", false, "api")}}
	f := newFakeInstall(t, plan)
	f.mockHooks("migrate")
	f.run()
	f.wantSteps(contract.OperationResult{Steps: f.final()}, map[string]status.Step{"sandbox": status.StepSucceeded, "before:migrate:api": status.StepFailed,
		"api": status.StepSkipped, "after:warm:api": status.StepSkipped})
	if got := f.lastMessage("after:warm:api"); got != "skipped: api did not run" {
		t.Fatalf("after:warm:api's message %q", got)
	}
}

// lastMessage is the message a step's last status was recorded with.
func (f *fakeInstall) lastMessage(step string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.messages[step]
}

// A hook the runner's policy refuses fails like a failing one, saying why.
func TestRefusedBeforeHookStopsTheOperation(t *testing.T) {
	f := newFakeInstall(t, hookPlan(hook("before:migrate", "", false)))
	f.mockHookRuns("migrate")
	f.run()
	f.wantSteps(contract.OperationResult{Steps: f.final()}, map[string]status.Step{"before:migrate": status.StepFailed,
		"sandbox": status.StepSkipped, "api": status.StepSkipped})
	f.wantFinished(status.OpFailed, `before:migrate: action migrate: the customer's runner does not allow action "migrate" (allowed: check)`, "failed")
	if jobs := f.jobs(); len(jobs) != 0 {
		t.Fatalf("jobs %q; want none", jobs)
	}
}

// A component's hooks where its step runs only if it renders differently
// (after a changed step): unchanged, neither hook runs; changed, both do.
func TestComponentHooksOfAStepThatMayBeUnchanged(t *testing.T) {
	for _, changed := range []bool{false, true} {
		st := steps("sandbox", "api<sandbox,before:migrate:api")
		st[1].IfChanged = true
		plan := contract.OperationPlan{Kind: store.OpUpdateInputs, ApprovalMode: status.ApproveAll, Steps: []contract.StepSpec{
			st[0], hook("before:migrate:api", "", false, "sandbox"), st[1], hook("after:warm:api", "always", false, "api")}}
		f := newFakeInstall(t, plan)
		f.mockHooks()
		f.env.OnActivity(contract.StepRenderChanged, mockAny, "op_1", "api").Return(changed, nil)
		res := f.run()
		want := map[string]status.Step{"sandbox": status.StepSucceeded, "before:migrate:api": status.StepUnchanged,
			"api": status.StepUnchanged, "after:warm:api": status.StepUnchanged}
		if changed {
			want = allSucceeded("sandbox", "before:migrate:api", "api", "after:warm:api")
		}
		f.wantSteps(res, want)
	}
}

// The operation's after-hook (when = success) runs though a component's
// after-hook (when = failure) did not: a hook that did not run is no
// failure.
func TestAfterHookIgnoresHooksThatDidNotRun(t *testing.T) {
	st := steps("sandbox", "api<sandbox")
	plan := contract.OperationPlan{Kind: store.OpProvision, ApprovalMode: status.ApproveAll, Steps: []contract.StepSpec{
		st[0], st[1], hook("after:alert:api", "failure", false, "api"),
		hook("after:warm", "success", false, "sandbox", "api", "after:alert:api")}}
	f := newFakeInstall(t, plan)
	f.mockHooks()
	res := f.run()
	f.wantSteps(res, map[string]status.Step{"sandbox": status.StepSucceeded, "api": status.StepSucceeded,
		"after:alert:api": status.StepSkipped, "after:warm": status.StepSucceeded})
}
