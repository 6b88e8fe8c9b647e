package workflows

import (
	"fmt"
	"slices"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
)

// scheduler runs an operation's steps as a dependency graph, each in a workflow goroutine of
// its own (see the package doc); its state needs no lock, as Temporal runs them one at a time.
type scheduler struct {
	opID   string
	plan   contract.OperationPlan
	runner contract.RunnerInfo
	// syncInJob: a terraform component's plan_apply job syncs its build itself (on a runner that
	// can), and may be queued while the sandbox still runs.
	syncInJob bool
	specs     map[string]contract.StepSpec
	// approvals holds one channel per step, filled by receiveApprovals.
	approvals map[string]workflow.Channel
	outcomes  map[string]stepOutcome
	started   map[string]bool
	// launched: the step's last job is queued with everything it needs (its
	// inputs): it will run to the end without the workflow.
	launched map[string]bool
	// queued: the step's job is queued, its inputs still to come.
	queued map[string]bool
	// stop: a denial or a cancellation; start nothing new.
	stop bool
	// lost: the steps' status writes that failed.
	lost unrecorded
}

// stepOutcome is what one step ended with.
type stepOutcome struct {
	Name   string
	Status status.Step
	Error  string
	// LeftBehind: what a step left behind says it left (LeaveBehind).
	LeftBehind []string
}

func newScheduler(ctx workflow.Context, opID string, plan contract.OperationPlan, runner contract.RunnerInfo) *scheduler {
	s := &scheduler{opID: opID, plan: plan, runner: runner,
		syncInJob: runner.ModuleSync && runner.DeferredInputs && !plan.PlanOnly && plan.ApprovalMode != status.Prompt,
		specs:     map[string]contract.StepSpec{}, approvals: map[string]workflow.Channel{},
		outcomes: map[string]stepOutcome{}, started: map[string]bool{}, launched: map[string]bool{}, queued: map[string]bool{}}
	for _, st := range plan.Steps {
		s.specs[st.Name] = st
		s.approvals[st.Name] = workflow.NewBufferedChannel(ctx, 1)
	}
	return s
}

// receiveApprovals hands each approval signal to its step's channel.
func (s *scheduler) receiveApprovals(ctx workflow.Context) {
	workflow.Go(ctx, func(ctx workflow.Context) {
		sig := workflow.GetSignalChannel(ctx, contract.ApprovalSignal)
		for {
			var ap contract.Approval
			if !sig.Receive(ctx, &ap) {
				return
			}
			if ch, ok := s.approvals[ap.Step]; ok {
				ch.SendAsync(ap)
			}
		}
	})
}

// run runs the steps until each has ended, or until the operation stopped
// and the steps it started have ended.
func (s *scheduler) run(ctx workflow.Context) {
	results := workflow.NewChannel(ctx)
	running := 0
	for len(s.outcomes) < len(s.plan.Steps) {
		running += s.startReady(ctx, results)
		if running == 0 {
			break
		}
		var o stepOutcome
		results.Receive(ctx, &o)
		running--
		s.outcomes[o.Name] = o
		if o.Status == status.StepDenied || ctx.Err() != nil {
			s.stop = true
		}
	}
}

// startReady starts each step whose startAfter steps all ended well, in a
// goroutine that sends its outcome to results, and skips each one of whose
// did not. It returns how many it started.
func (s *scheduler) startReady(ctx workflow.Context, results workflow.Channel) int {
	n := 0
	for _, st := range s.plan.Steps {
		if s.started[st.Name] || s.stop {
			continue
		}
		ready, blocked := s.readyToStart(st)
		if blocked != "" {
			msg := "skipped: " + blocked + " did not succeed"
			s.started[st.Name] = true
			s.outcomes[st.Name] = stepOutcome{Name: st.Name, Status: status.StepSkipped, Error: msg}
			s.step(st).setStatus(ctx, status.StepSkipped, msg)
			continue
		}
		if !ready {
			continue
		}
		s.started[st.Name] = true
		n++
		workflow.Go(ctx, func(gctx workflow.Context) {
			results.Send(gctx, s.step(st).run(gctx))
		})
	}
	return n
}

// readyToStart says whether every step st starts after has ended, and names
// one that did not succeed.
func (s *scheduler) readyToStart(st contract.StepSpec) (ready bool, blocked string) {
	ready = true
	for _, d := range s.hookDeps(st, startAfter(st, s.syncsBuild(st))) {
		o, ok := s.outcomes[d]
		if !ok {
			ready = false
		} else if !s.ok(d, o) && !isAfterHook(st) { // an after-hook decides itself (afterHookGate)
			blocked = d
		}
	}
	return ready, blocked
}

// hookDeps adds to deps the hooks st comes after: a step that delivers a
// build starts after the hooks before it too (a before-hook guards the
// build's delivery).
func (s *scheduler) hookDeps(st contract.StepSpec, deps []string) []string {
	for _, d := range st.After {
		if s.specs[d].Hook != nil && !slices.Contains(deps, d) {
			deps = append(deps, d)
		}
	}
	return deps
}

// ok: the steps after step d may go on once it ended as o; a before-hook
// with continue_on_failure that failed stops nothing.
func (s *scheduler) ok(d string, o stepOutcome) bool {
	h := s.specs[d].Hook
	return status.StepOK(o.Status) || o.Status == status.StepFailed && h != nil && h.ContinueOnFailure
}

// step is how st runs in this operation.
func (s *scheduler) step(st contract.StepSpec) *step {
	return &step{opID: s.opID, plan: s.plan, spec: st, approval: s.approvals[st.Name], sched: s,
		jobs: JobPolicy{MaxAttempts: 3, Wait: s.plan.JobWait}, lost: &s.lost}
}

// startAfter is what a step waits for before it starts: a step that deploys a build only the
// sandbox, at once when it syncs in a job that may be queued before it (syncsBuild).
func startAfter(st contract.StepSpec, syncsBuild bool) []string {
	switch {
	case !hasBuild(st):
		return st.After
	case syncsBuild && st.Prestart && st.PrestartBeforeSandbox:
		return nil
	}
	if slices.Contains(st.After, status.SandboxStep) {
		return []string{status.SandboxStep}
	}
	return nil
}

// syncsBuild: the step's plan_apply job syncs its build (no sync job).
func (s *scheduler) syncsBuild(st contract.StepSpec) bool {
	return s.syncInJob && hasBuild(st) && st.Type == contract.TypeTerraformModule
}

// settled: step d ended, or never will (the operation stopped before it
// started).
func (s *scheduler) settled(d string) bool {
	_, ok := s.outcomes[d]
	return ok || s.stop && !s.started[d]
}

// ended says whether a step of the operation has ended.
func (s *scheduler) ended(d string) bool {
	_, ok := s.outcomes[d]
	return ok
}

// waitDeps waits until the steps st comes after have settled; skipped says
// why st cannot run ("" when it can).
func (s *scheduler) waitDeps(ctx workflow.Context, st contract.StepSpec) (skipped string) {
	_ = workflow.Await(ctx, func() bool {
		for _, d := range st.After {
			if !s.settled(d) {
				return false
			}
		}
		return true
	})
	for _, d := range st.After {
		o, ok := s.outcomes[d]
		switch {
		case !ok:
			return "skipped: the operation stopped before " + d + " ran"
		case !s.ok(d, o):
			return "skipped: " + d + " did not succeed"
		}
	}
	return ""
}

// failedDep names a step st comes after that ended without succeeding.
func (s *scheduler) failedDep(st contract.StepSpec) string {
	for _, d := range st.After {
		if o, ok := s.outcomes[d]; ok && !s.ok(d, o) {
			return d
		}
	}
	return ""
}

// ahead: step d runs, or will once its own dependencies are done: its last
// job is launched; or it is queued and every dependency of d has launched
// its own (or succeeded).
func (s *scheduler) ahead(d string) bool {
	if s.launched[d] {
		return true
	}
	if !s.queued[d] {
		return false
	}
	for _, dd := range s.specs[d].After {
		o, ended := s.outcomes[dd]
		if ended && !s.ok(dd, o) || !ended && !s.launched[dd] {
			return false // d will be skipped, or is not that far yet
		}
	}
	return true
}

// prestart waits until st's job may be queued before its dependencies end (every one of them
// ahead, one still running), and says whether to (false: wait for them as usual). Why two
// steps ahead: docs/architecture/operations.md, Prestart.
func (s *scheduler) prestart(ctx workflow.Context, st contract.StepSpec) bool {
	if !st.Prestart || !s.runner.DeferredInputs {
		return false
	}
	_ = workflow.Await(ctx, func() bool {
		for _, d := range st.After {
			if !s.settled(d) && !s.ahead(d) {
				return false
			}
		}
		return true
	})
	running := false
	for _, d := range st.After {
		o, ok := s.outcomes[d]
		switch {
		case ok && !s.ok(d, o):
			return false // it is skipped: waitDeps says so
		case !ok && s.ahead(d):
			running = true
		case !ok:
			return false // never started (the operation stopped): waitDeps says so
		}
	}
	return running && ctx.Err() == nil
}

// result is how the operation ended: each step's status and the
// operation's, with the failures' messages.
func (s *scheduler) result(ctx workflow.Context) contract.OperationResult {
	res := contract.OperationResult{Status: status.OpSucceeded, Steps: map[string]status.Step{}}
	var failures []string
	for _, st := range s.plan.Steps {
		o, ok := s.outcomes[st.Name]
		if !ok {
			o = stepOutcome{Name: st.Name, Status: status.StepSkipped}
		}
		res.Steps[st.Name] = o.Status
		switch o.Status {
		case status.StepLeftBehind:
			if res.LeftBehind == nil {
				res.LeftBehind = map[string][]string{}
			}
			res.LeftBehind[st.Name] = o.LeftBehind
		case status.StepFailed:
			if st.Hook != nil && st.Hook.ContinueOnFailure {
				break // shown failed, the operation went on: it does not fail it
			}
			res.Status = status.OpFailed
			failures = append(failures, fmt.Sprintf("%s: %s", st.Name, o.Error))
		case status.StepDenied:
			if res.Status != status.OpFailed {
				res.Status = status.OpDenied
			}
		case status.StepCancelled:
			if res.Status == status.OpSucceeded {
				res.Status = status.OpCancelled
			}
		}
	}
	if ctx.Err() != nil {
		res.Status = status.OpCancelled
	}
	slices.Sort(failures)
	res.Error = s.lost.withNote(strings.Join(failures, "\n"))
	return res
}
