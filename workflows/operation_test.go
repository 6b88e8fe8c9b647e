package workflows

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// These tests run the operation workflow's scheduling (order, parallel
// branches, skips, approvals, plan-only, cancellation, prestart) in
// Temporal's test environment, with the activities played by fakeInstall.
// The activities themselves run against real PostgreSQL, gateway and
// runners in the e2e package.

// fakeInstall plays an install's activities: each job succeeds as soon as
// it is awaited unless a test says otherwise, and what a user would see
// (step statuses, jobs and their order, the operation's end) is recorded.
type fakeInstall struct {
	t      *testing.T
	env    *testsuite.TestWorkflowEnvironment
	plan   contract.OperationPlan
	runner contract.RunnerInfo
	// pausedWaits is how many WaitForRunner calls find the runner paused
	// (RunnerOnline then says it is not online).
	pausedWaits int
	// runnerGone: the runner is not online, and WaitForRunner fails so.
	runnerGone error
	// awaitJob, when set, answers AwaitJob for a job ("<step>/<operation>");
	// ok false: the job succeeds.
	awaitJob func(ctx context.Context, jobID string) (res contract.JobResult, err error, ok bool)
	// planned, when set, is a step's plan; default: changes (applied by a
	// plan_apply job).
	planned func(step string, applied bool) contract.PlanSummary
	// statusErr, when set, is what SetStepStatus answers (nil: recorded).
	statusErr func(step string, outcome status.Step) error

	mu        sync.Mutex
	events    []string                 // "enqueue <job>", "end <job>", "inputs <step>", "cancel <job>: <reason>"
	statuses  map[string][]status.Step // each step's statuses, in order
	messages  map[string]string        // each step's last message
	jobInputs map[string]contract.TerraformJobInput
	finished  []string                   // FinishOperation's status, error and install status
	decisions map[string]status.Decision // what the API recorded on each step's plan
}

// steps builds an operation's steps: "a<b,c" is step a after b and c; the
// sandbox is "sandbox", every other step a terraform_module.
func steps(specs ...string) []contract.StepSpec {
	var out []contract.StepSpec
	for _, s := range specs {
		name, after, _ := strings.Cut(s, "<")
		st := contract.StepSpec{Name: name, Type: contract.TypeTerraformModule}
		if name == status.SandboxStep {
			st.Type = ""
		}
		if after != "" {
			st.After = strings.Split(after, ",")
		}
		out = append(out, st)
	}
	return out
}

func newFakeInstall(t *testing.T, plan contract.OperationPlan) *fakeInstall {
	f := &fakeInstall{t: t, env: newEnv(), plan: plan,
		statuses: map[string][]status.Step{}, messages: map[string]string{}, jobInputs: map[string]contract.TerraformJobInput{}, decisions: map[string]status.Decision{}}
	f.plan.SucceededInstallStatus, f.plan.FailedInstallStatus, f.plan.InterruptedInstallStatus = "active", "failed", "interrupted"
	registerActivities(f.env)
	f.mockOperation()
	f.mockBuilds()
	f.mockTerraform()
	return f
}

func (f *fakeInstall) log(event string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, event)
}

func (f *fakeInstall) mockOperation() {
	f.env.OnActivity(contract.BeginOperation, mockAny, "op_1").Return(func(context.Context, string) (contract.OperationPlan, error) {
		return f.plan, nil
	})
	f.env.OnActivity(contract.RunnerOnline, mockAny, "op_1").Return(func(context.Context, string) (contract.RunnerCheck, error) {
		return contract.RunnerCheck{Online: f.pausedWaits == 0 && f.runnerGone == nil, Runner: f.runner}, nil
	})
	f.env.OnActivity(contract.WaitForRunner, mockAny, "op_1", mockAny).Return(func(context.Context, string, time.Duration) (contract.RunnerInfo, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.events = append(f.events, "wait for runner")
		if f.runnerGone != nil {
			return contract.RunnerInfo{}, f.runnerGone
		}
		if f.pausedWaits > 0 {
			f.pausedWaits--
			return contract.RunnerInfo{}, temporal.NewNonRetryableApplicationError("runner paused by the customer since …", contract.ErrRunnerPaused, nil)
		}
		return f.runner, nil
	}).Maybe() // only when the runner is not online at first
	f.env.OnActivity(contract.SetStepStatus, mockAny, "op_1", mockAny, mockAny, mockAny).Return(func(_ context.Context, _, step string, outcome status.Step, msg string) error {
		if f.statusErr != nil {
			if err := f.statusErr(step, outcome); err != nil {
				return err
			}
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		f.statuses[step] = append(f.statuses[step], outcome)
		f.messages[step] = msg
		return nil
	})
	f.env.OnActivity(contract.StepDecision, mockAny, "op_1", mockAny).Return(func(_ context.Context, _, step string) (status.Decision, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.decisions[step], nil
	}).Maybe() // only for a step waiting for approval
	f.env.OnActivity(contract.FinishOperation, mockAny, "op_1", mockAny, mockAny, mockAny).Return(func(_ context.Context, _ string, outcome status.Op, msg string, installStatus status.Install) error {
		f.finished = []string{string(outcome), msg, string(installStatus)}
		return nil
	})
	f.env.OnActivity(contract.AwaitJob, mockAny, mockAny, false).Return(func(ctx context.Context, jobID string, _ bool) (contract.JobResult, error) {
		if f.awaitJob != nil {
			if res, err, ok := f.awaitJob(ctx, jobID); ok {
				return res, err
			}
		}
		f.log("end " + jobID)
		return contract.JobResult{JobID: jobID, Status: status.JobSucceeded, Attempt: 1}, nil
	})
	f.env.OnActivity(contract.CancelJob, mockAny, mockAny, mockAny).Return(func(_ context.Context, jobID, reason string) error {
		f.log("cancel " + jobID + ": " + reason)
		return nil
	}).Maybe() // only when cancelled
}

// mockBuilds: every component's build is there; its sync job copies it.
// These mocks, and mockTerraform's that a plan may not need, are Maybe: a
// test's AssertExpectations asserts the others.
func (f *fakeInstall) mockBuilds() {
	f.env.OnActivity(contract.ResolveBuild, mockAny, "op_1", mockAny).Return(func(_ context.Context, _, step string) (contract.ResolvedBuild, error) {
		return contract.ResolvedBuild{BuildSummary: contract.BuildSummary{BuildID: "build-" + step, Status: status.BuildSucceeded}}, nil
	}).Maybe()
	f.env.OnActivity(contract.EnqueueSyncJob, mockAny, mockAny).Return(func(_ context.Context, in contract.SyncJobInput) (contract.JobRef, error) {
		f.log("enqueue " + in.Step + "/sync")
		return contract.JobRef{JobID: in.Step + "/sync", Created: true}, nil
	}).Maybe()
	f.env.OnActivity(contract.RecordSync, mockAny, "op_1", mockAny, mockAny, mockAny).Return(contract.SyncSummary{}, nil).Maybe()
}

func (f *fakeInstall) mockTerraform() {
	f.env.OnActivity(contract.EnqueueTerraformJob, mockAny, mockAny).Return(func(_ context.Context, in contract.TerraformJobInput) (contract.JobRef, error) {
		job := in.Step + "/" + in.Operation
		f.mu.Lock()
		f.jobInputs[job] = in
		f.mu.Unlock()
		f.log("enqueue " + job)
		return contract.JobRef{JobID: job, Created: true}, nil
	})
	f.env.OnActivity(contract.ProvideTerraformInputs, mockAny, mockAny, mockAny).Return(func(_ context.Context, in contract.TerraformJobInput, _ string) error {
		f.log("inputs " + in.Step)
		return nil
	}).Maybe()
	plan := func(applied bool) func(context.Context, string, string, string) (contract.PlanSummary, error) {
		return func(_ context.Context, _, step, _ string) (contract.PlanSummary, error) {
			if f.planned != nil {
				return f.planned(step, applied), nil
			}
			return contract.PlanSummary{HasChanges: true, Add: 1, Applied: applied}, nil
		}
	}
	f.env.OnActivity(contract.RecordPlan, mockAny, "op_1", mockAny, mockAny).Return(plan(false)).Maybe()
	f.env.OnActivity(contract.RecordPlanApply, mockAny, "op_1", mockAny, mockAny).Return(plan(true))
	f.env.OnActivity(contract.RecordApply, mockAny, "op_1", mockAny, mockAny).Return(contract.ApplySummary{}, nil).Maybe()
}

// run runs the operation to its end and returns its result.
func (f *fakeInstall) run() contract.OperationResult {
	f.t.Helper()
	f.env.ExecuteWorkflow(ProvisionInstall, contract.OperationInput{OperationID: "op_1"})
	if !f.env.IsWorkflowCompleted() {
		f.t.Fatal("the operation did not end")
	}
	var res contract.OperationResult
	_ = f.env.GetWorkflowResult(&res)
	return res
}

// waitFor waits (in real time, from an activity) until event happened.
func (f *fakeInstall) waitFor(event string) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if f.index(event) >= 0 {
			return true
		}
	}
	return false
}

func (f *fakeInstall) index(event string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Index(f.events, event)
}

// jobs are the jobs enqueued, in order.
func (f *fakeInstall) jobs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, e := range f.events {
		if job, ok := strings.CutPrefix(e, "enqueue "); ok {
			out = append(out, job)
		}
	}
	return out
}

// before checks that each event happened, each before the next.
func (f *fakeInstall) before(events ...string) {
	f.t.Helper()
	last := -1
	for _, e := range events {
		i := f.index(e)
		if i < 0 || i < last {
			f.t.Fatalf("want %q in order; events: %q", events, f.events)
		}
		last = i
	}
}

// final is each step's last status.
func (f *fakeInstall) final() map[string]status.Step {
	out := map[string]status.Step{}
	for step, l := range f.statuses {
		out[step] = l[len(l)-1]
	}
	return out
}

func (f *fakeInstall) wantSteps(res contract.OperationResult, want map[string]status.Step) {
	f.t.Helper()
	if !mapsEqual(res.Steps, want) || !mapsEqual(f.final(), want) {
		f.t.Fatalf("steps: result %v, recorded %v; want %v (events %q)", res.Steps, f.final(), want, f.events)
	}
}

func (f *fakeInstall) wantFinished(outcome status.Op, msg string, installStatus status.Install) {
	f.t.Helper()
	if want := []string{string(outcome), msg, string(installStatus)}; !slices.Equal(f.finished, want) {
		f.t.Fatalf("FinishOperation(%q); want %q", f.finished, want)
	}
}

func mapsEqual(a, b map[string]status.Step) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// provisionSteps: the sandbox; network and cache after it; web and worker
// after network.
var provisionSteps = steps("sandbox", "network<sandbox", "cache<sandbox", "web<network", "worker<network")

func allSucceeded(names ...string) map[string]status.Step {
	out := map[string]status.Step{}
	for _, n := range names {
		out[n] = status.StepSucceeded
	}
	return out
}

func TestOperationRunsStepsInDependencyOrder(t *testing.T) {
	f := newFakeInstall(t, contract.OperationPlan{Kind: store.OpProvision, ApprovalMode: status.ApproveAll, Steps: provisionSteps})
	// Independent steps run side by side: web's and worker's jobs, and
	// network's and cache's, wait for each other to be queued.
	side := map[string]string{"web/plan_apply": "worker/plan_apply", "worker/plan_apply": "web/plan_apply",
		"network/plan_apply": "cache/plan_apply", "cache/plan_apply": "network/plan_apply"}
	f.awaitJob = func(_ context.Context, job string) (contract.JobResult, error, bool) {
		other := side[job]
		if other != "" && !f.waitFor("enqueue "+other) {
			return contract.JobResult{}, errors.New(job + " ended before " + other + " was queued"), true
		}
		return contract.JobResult{}, nil, false
	}
	res := f.run()
	if err := f.env.GetWorkflowError(); err != nil || res.Status != status.OpSucceeded {
		t.Fatalf("result %+v, error %v", res, err)
	}
	f.wantSteps(res, allSucceeded("sandbox", "network", "cache", "web", "worker"))
	f.wantFinished(status.OpSucceeded, "", "active")
	// The first plan_apply is the sandbox's; a component that does not come
	// right after the sandbox (web, worker) may queue its sync before it
	// (the sync learns the install's registry when it is known).
	jobs := f.jobs()
	applies := slices.DeleteFunc(slices.Clone(jobs), func(j string) bool { return !strings.HasSuffix(j, "/plan_apply") })
	if len(jobs) != 9 || len(applies) != 5 || applies[0] != "sandbox/plan_apply" {
		t.Fatalf("jobs %q: want the sandbox's plan_apply before any other, and a sync and a plan_apply per component", jobs)
	}
	// Builds are synced once the sandbox is done, each component deployed
	// once its dependencies are.
	f.before("end sandbox/plan_apply", "enqueue network/sync", "end network/sync", "enqueue network/plan_apply",
		"end network/plan_apply", "enqueue web/plan_apply")
	f.before("end network/plan_apply", "enqueue worker/plan_apply")
	f.before("end sandbox/plan_apply", "enqueue cache/sync", "end cache/sync", "enqueue cache/plan_apply")
	f.before("enqueue web/sync", "end web/sync", "enqueue web/plan_apply")
	f.before("enqueue worker/sync", "end worker/sync", "enqueue worker/plan_apply")
}

func TestFailedStepSkipsItsDependents(t *testing.T) {
	f := newFakeInstall(t, contract.OperationPlan{Kind: store.OpProvision, ApprovalMode: status.ApproveAll, Steps: provisionSteps})
	f.planned = func(step string, applied bool) contract.PlanSummary {
		if step == "network" {
			return contract.PlanSummary{Failed: true, Error: "subnet overlaps"}
		}
		return contract.PlanSummary{HasChanges: true, Applied: applied}
	}
	f.run()
	// The workflow fails (it has no result); the store says why.
	if err := f.env.GetWorkflowError(); err == nil || !strings.Contains(err.Error(), "network: subnet overlaps") {
		t.Fatalf("workflow error %v; want network's failure", err)
	}
	// cache, which does not come after network, still runs.
	f.wantSteps(contract.OperationResult{Steps: f.final()}, map[string]status.Step{"sandbox": status.StepSucceeded, "network": status.StepFailed, "cache": status.StepSucceeded,
		"web": status.StepSkipped, "worker": status.StepSkipped})
	f.wantFinished(status.OpFailed, "network: subnet overlaps", "failed")
	if slices.Contains(f.jobs(), "web/plan_apply") || slices.Contains(f.jobs(), "worker/plan_apply") {
		t.Fatalf("jobs %q: a skipped step's job was queued", f.jobs())
	}
}

// approve answers the step's plan at the given time of the workflow's
// clock, as the API does: the decision recorded, then the signal.
func (f *fakeInstall) approve(step string, ok bool, at time.Duration) {
	f.env.RegisterDelayedCallback(func() {
		f.log("approval " + step)
		f.mu.Lock()
		f.decisions[step] = map[bool]status.Decision{true: status.DecisionApproved, false: status.DecisionDenied}[ok]
		f.mu.Unlock()
		f.env.SignalWorkflow(contract.ApprovalSignal, contract.Approval{Step: step, Approve: ok})
	}, at)
}

// forge sends an approval signal the API never recorded (straight to
// Temporal) at the given time.
func (f *fakeInstall) forge(step string, at time.Duration) {
	f.env.RegisterDelayedCallback(func() {
		f.log("forged " + step)
		f.env.SignalWorkflow(contract.ApprovalSignal, contract.Approval{Step: step, Approve: true})
	}, at)
}

// A forged approval signal applies nothing: the step waits on until the
// API records a decision.
func TestForgedApprovalSignalAppliesNothing(t *testing.T) {
	f := newFakeInstall(t, contract.OperationPlan{Kind: store.OpProvision, ApprovalMode: status.Prompt,
		Steps: steps("sandbox", "network<sandbox")})
	f.forge("sandbox", time.Minute)
	f.forge("sandbox", 2*time.Minute)
	f.approve("sandbox", true, time.Hour)
	f.approve("network", false, 2*time.Hour)
	res := f.run()
	if err := f.env.GetWorkflowError(); err != nil || res.Status != status.OpDenied {
		t.Fatalf("result %+v, error %v; want denied", res, err)
	}
	f.before("end sandbox/plan", "forged sandbox", "approval sandbox", "enqueue sandbox/apply")
	if res.Steps["sandbox"] != status.StepSucceeded || res.Steps["network"] != status.StepDenied {
		t.Fatalf("steps %v: want sandbox applied once approved, network denied", res.Steps)
	}
	if slices.Contains(f.jobs(), "network/apply") {
		t.Fatalf("jobs %q: the denied plan was applied", f.jobs())
	}
}

func TestPromptWaitsForApproval(t *testing.T) {
	f := newFakeInstall(t, contract.OperationPlan{Kind: store.OpProvision, ApprovalMode: status.Prompt,
		Steps: steps("sandbox", "network<sandbox")})
	f.approve("sandbox", true, time.Minute)
	f.approve("network", true, 2*time.Minute)
	res := f.run()
	if err := f.env.GetWorkflowError(); err != nil || res.Status != status.OpSucceeded {
		t.Fatalf("result %+v, error %v", res, err)
	}
	f.wantSteps(res, allSucceeded("sandbox", "network"))
	for _, step := range []string{"sandbox", "network"} {
		if !slices.Contains(f.statuses[step], status.StepWaitingApproval) {
			t.Fatalf("%s went %q: never waited for approval", step, f.statuses[step])
		}
	}
	// Under prompt, a plan job, then the apply of exactly that plan once
	// approved.
	f.before("end sandbox/plan", "approval sandbox", "enqueue sandbox/apply", "end sandbox/apply",
		"enqueue network/plan", "end network/plan", "approval network", "enqueue network/apply")
	if in := f.jobInputs["network/apply"]; in.PlanJobID != "network/plan" {
		t.Fatalf("network's apply job applies %q, want its plan job", in.PlanJobID)
	}
}

func TestPromptDenialStopsTheOperation(t *testing.T) {
	f := newFakeInstall(t, contract.OperationPlan{Kind: store.OpProvision, ApprovalMode: status.Prompt,
		Steps: steps("sandbox", "network<sandbox")})
	f.approve("sandbox", false, time.Minute)
	res := f.run()
	if err := f.env.GetWorkflowError(); err != nil || res.Status != status.OpDenied {
		t.Fatalf("result %+v, error %v; want denied", res, err)
	}
	if res.Steps["sandbox"] != status.StepDenied || res.Steps["network"] != status.StepSkipped || f.final()["sandbox"] != status.StepDenied {
		t.Fatalf("steps %v, recorded %v", res.Steps, f.final())
	}
	f.wantFinished(status.OpDenied, "", "interrupted")
	if jobs := f.jobs(); !slices.Equal(jobs, []string{"sandbox/plan"}) {
		t.Fatalf("jobs %q: want only the denied plan", jobs)
	}
}

func TestPlanOnlyPlansEveryStepAndAppliesNothing(t *testing.T) {
	f := newFakeInstall(t, contract.OperationPlan{Kind: store.OpProvision, ApprovalMode: status.ApproveAll, PlanOnly: true,
		Steps: steps("sandbox", "network<sandbox")})
	res := f.run()
	if err := f.env.GetWorkflowError(); err != nil || res.Status != status.OpSucceeded {
		t.Fatalf("result %+v, error %v", res, err)
	}
	f.wantSteps(res, map[string]status.Step{"sandbox": status.StepPlanned, "network": status.StepPlanned})
	f.wantFinished(status.OpSucceeded, "", "interrupted")
	if jobs := f.jobs(); !slices.Equal(jobs, []string{"sandbox/plan", "network/sync", "network/plan"}) {
		t.Fatalf("jobs %q: want plans only", jobs)
	}
}

func TestCancellingTheOperationCancelsItsSteps(t *testing.T) {
	f := newFakeInstall(t, contract.OperationPlan{Kind: store.OpProvision, ApprovalMode: status.ApproveAll, Steps: provisionSteps})
	// network's job runs until the operation is cancelled.
	f.awaitJob = func(_ context.Context, job string) (contract.JobResult, error, bool) {
		if job != "network/plan_apply" {
			return contract.JobResult{}, nil, false
		}
		time.Sleep(5 * time.Millisecond)
		return contract.JobResult{}, errors.New("still running"), true
	}
	f.env.RegisterDelayedCallback(f.env.CancelWorkflow, time.Minute)
	res := f.run()
	if res.Status != status.OpCancelled {
		t.Fatalf("result %+v, error %v; want cancelled", res, f.env.GetWorkflowError())
	}
	f.wantSteps(res, map[string]status.Step{"sandbox": status.StepSucceeded, "network": status.StepCancelled, "cache": status.StepSucceeded,
		"web": status.StepCancelled, "worker": status.StepCancelled})
	f.wantFinished(status.OpCancelled, "", "interrupted")
	if f.index("cancel network/plan_apply: workflow cancelled") < 0 {
		t.Fatalf("network's job was not cancelled: %q", f.events)
	}
	if slices.Contains(f.jobs(), "web/plan_apply") || slices.Contains(f.jobs(), "worker/plan_apply") {
		t.Fatalf("jobs %q: a step after the cancelled one was queued", f.jobs())
	}
}

func TestPrestartQueuesAJobTwoStepsAhead(t *testing.T) {
	chain := steps("sandbox", "a<sandbox", "b<a", "c<b")
	for i := range chain[1:] {
		chain[i+1].Prestart, chain[i+1].PrestartBeforeSandbox = true, true
	}
	f := newFakeInstall(t, contract.OperationPlan{Kind: store.OpProvision, ApprovalMode: status.ApproveAll, Steps: chain})
	f.runner = contract.RunnerInfo{DeferredInputs: true, ModuleSync: true}
	// Each running job ends only once the job two steps after it is queued.
	twoAhead := map[string]string{"sandbox/plan_apply": "b/plan_apply", "a/plan_apply": "c/plan_apply"}
	f.awaitJob = func(_ context.Context, job string) (contract.JobResult, error, bool) {
		if next := twoAhead[job]; next != "" && !f.waitFor("enqueue "+next) {
			return contract.JobResult{}, errors.New(next + " was not queued while " + job + " ran"), true
		}
		return contract.JobResult{}, nil, false
	}
	res := f.run()
	if err := f.env.GetWorkflowError(); err != nil || res.Status != status.OpSucceeded {
		t.Fatalf("result %+v, error %v", res, err)
	}
	f.wantSteps(res, allSucceeded("sandbox", "a", "b", "c"))
	// No sync jobs (the plan_apply jobs copy the builds); a and b queued
	// while the sandbox runs, c once a's inputs are given, never more than
	// two steps ahead.
	if jobs := f.jobs(); !slices.Equal(jobs, []string{"sandbox/plan_apply", "a/plan_apply", "b/plan_apply", "c/plan_apply"}) {
		t.Fatalf("jobs %q", jobs)
	}
	f.before("enqueue b/plan_apply", "end sandbox/plan_apply", "inputs a", "enqueue c/plan_apply", "end a/plan_apply",
		"inputs b", "end b/plan_apply", "inputs c", "end c/plan_apply")
	for _, step := range []string{"a", "b", "c"} {
		in := f.jobInputs[step+"/plan_apply"]
		if !in.DeferInputs || in.SyncBuildID != "build-"+step || in.DeferRegistry != (step == "a") {
			t.Fatalf("%s's job: %+v; want deferred inputs, its build synced by the job, the registry deferred for a only", step, in)
		}
	}
}
