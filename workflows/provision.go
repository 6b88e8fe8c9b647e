package workflows

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/outpost-dev/outpost/activities"
	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// OperationWorkflowID is the ID of an install operation's workflow, e.g.
// "install/ins_123/provision". One per install and kind; the store's install
// lock keeps two mutating operations of any kind from running at once.
func OperationWorkflowID(installID, kind, component string) string {
	if component != "" {
		return "install/" + installID + "/" + kind + "/" + component
	}
	return "install/" + installID + "/" + kind
}

// ApprovalSignal is the signal that approves or denies a waiting plan.
const ApprovalSignal = "approval"

// Approval is the payload of ApprovalSignal.
type Approval struct {
	Step    string
	Approve bool
}

// OperationInput names the operation; everything else is in the store.
type OperationInput struct {
	OperationID string
}

// OperationResult is how each step ended (no outputs: they may be secret).
type OperationResult struct {
	Status string
	Steps  map[string]string
	Error  string
}

// ProvisionInstall waits for the install's runner, applies the sandbox, then
// every component in dependency order, independent ones in parallel.
func ProvisionInstall(ctx workflow.Context, in OperationInput) (OperationResult, error) {
	return runOperation(ctx, in)
}

// DeprovisionInstall destroys every component in reverse dependency order,
// then the sandbox.
func DeprovisionInstall(ctx workflow.Context, in OperationInput) (OperationResult, error) {
	return runOperation(ctx, in)
}

// ReprovisionInstall re-plans and applies the sandbox and every component
// (a no-op plan skips its apply).
func ReprovisionInstall(ctx workflow.Context, in OperationInput) (OperationResult, error) {
	return runOperation(ctx, in)
}

// DeployComponent deploys one component (and its dependents if asked).
func DeployComponent(ctx workflow.Context, in OperationInput) (OperationResult, error) {
	return runOperation(ctx, in)
}

// TeardownComponent destroys one component (and its dependents first, if
// asked).
func TeardownComponent(ctx workflow.Context, in OperationInput) (OperationResult, error) {
	return runOperation(ctx, in)
}

// stepOutcome is what one step ended with.
type stepOutcome struct {
	Name   string
	Status string
	Error  string
}

func runOperation(ctx workflow.Context, in OperationInput) (OperationResult, error) {
	// The operation begins with local activities: BeginOperation, then a look
	// at the runner, in the first workflow task; only a runner that is not
	// online now is waited for by the WaitForRunner activity. FinishOperation
	// is a local activity too.
	quick := func(c workflow.Context, activity any, args ...any) workflow.Future {
		return workflow.ExecuteLocalActivity(localActivity(c), activity, args...)
	}
	var plan activities.OperationPlan
	if err := quick(ctx, a.BeginOperation, in.OperationID).Get(ctx, &plan); err != nil {
		return OperationResult{Status: store.OpFailed, Error: err.Error()}, err
	}
	res := OperationResult{Status: store.OpSucceeded, Steps: map[string]string{}}
	finish := func(status, msg, installStatus string) (OperationResult, error) {
		res.Status, res.Error = status, msg
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		err := quick(dctx, a.FinishOperation, in.OperationID, status, msg, installStatus).Get(dctx, nil)
		if status == store.OpFailed && msg != "" {
			return res, temporal.NewNonRetryableApplicationError(msg, "OperationFailed", nil)
		}
		return res, err
	}

	waitCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: plan.RunnerTimeout + time.Minute,
		HeartbeatTimeout:    awaitHeartbeat,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
	})
	var check activities.RunnerCheck
	if err := workflow.ExecuteLocalActivity(localActivity(ctx), a.RunnerOnline, in.OperationID).Get(ctx, &check); err != nil {
		return finish(store.OpFailed, rootMessage(err), plan.FailedInstallStatus)
	}
	runner := check.Runner
	if !check.Online {
		if err := workflow.ExecuteActivity(waitCtx, a.WaitForRunner, in.OperationID, plan.RunnerTimeout).Get(ctx, &runner); err != nil {
			return finish(store.OpFailed, rootMessage(err), plan.FailedInstallStatus)
		}
	}

	// A terraform component's plan_apply job copies the step's build into
	// the install's registry itself, on a runner that can: no sync job
	// before it, and it may be queued while the sandbox, which provides that
	// registry, still runs.
	syncInJob := runner.ModuleSync && runner.DeferredInputs && !plan.PlanOnly && plan.ApprovalMode != store.Prompt
	syncsInJob := func(st activities.StepSpec) bool {
		return syncInJob && hasBuild(st) && st.Type == appconfig.TypeTerraformModule
	}
	specs := map[string]activities.StepSpec{}
	for _, st := range plan.Steps {
		specs[st.Name] = st
	}

	// One channel per step for its approval, filled by one signal reader.
	approvals := map[string]workflow.Channel{}
	for _, st := range plan.Steps {
		approvals[st.Name] = workflow.NewBufferedChannel(ctx, 1)
	}
	workflow.Go(ctx, func(ctx workflow.Context) {
		sig := workflow.GetSignalChannel(ctx, ApprovalSignal)
		for {
			var ap Approval
			if !sig.Receive(ctx, &ap) {
				return
			}
			if ch, ok := approvals[ap.Step]; ok {
				ch.SendAsync(ap)
			}
		}
	})

	outcomes := map[string]stepOutcome{}
	started := map[string]bool{}
	// launched: the step's last job is queued with everything it needs (its
	// inputs): it will run to the end without the workflow. A step whose
	// dependencies are all ahead (below) may queue its own job (prestart).
	launched := map[string]bool{}
	// queued: the step's job is queued, its inputs still to come (a
	// prestart).
	queued := map[string]bool{}
	// ahead: step d runs, or will once its own dependencies are done: its
	// last job is launched; or it is queued and every dependency of d has
	// launched its own (or succeeded).
	ahead := func(d string) bool {
		if launched[d] {
			return true
		}
		if !queued[d] {
			return false
		}
		for _, dd := range specs[d].After {
			o, ended := outcomes[dd]
			if ended && !stepOK(o.Status) || !ended && !launched[dd] {
				return false // d will be skipped, or is not that far yet
			}
		}
		return true
	}
	results := workflow.NewChannel(ctx)
	running := 0
	stop := false // a denial or a cancellation: start nothing new
	for len(outcomes) < len(plan.Steps) {
		for _, st := range plan.Steps {
			if started[st.Name] || stop {
				continue
			}
			ready, blocked := true, ""
			for _, d := range startAfter(st, syncsInJob(st)) {
				o, ok := outcomes[d]
				if !ok {
					ready = false
				} else if !stepOK(o.Status) {
					blocked = d
				}
			}
			if blocked != "" {
				started[st.Name] = true
				outcomes[st.Name] = stepOutcome{Name: st.Name, Status: store.StepSkipped, Error: "skipped: " + blocked + " did not succeed"}
				_ = workflow.ExecuteLocalActivity(localActivity(ctx), a.SetStepStatus, in.OperationID, st.Name, store.StepSkipped, outcomes[st.Name].Error).Get(ctx, nil)
				continue
			}
			if !ready {
				continue
			}
			started[st.Name] = true
			running++
			workflow.Go(ctx, func(gctx workflow.Context) {
				// What the step must wait for beyond what it started after
				// (see startAfter): outcomes are read between the
				// coroutines' turns, as Temporal runs them one at a time.
				// Once the operation stops (a denial), a dependency that
				// never started never ends: it is not waited for.
				waitDeps := func(ctx workflow.Context) string {
					_ = workflow.Await(ctx, func() bool {
						for _, d := range st.After {
							if _, ok := outcomes[d]; !ok && !(stop && !started[d]) {
								return false
							}
						}
						return true
					})
					for _, d := range st.After {
						o, ok := outcomes[d]
						switch {
						case !ok:
							return "skipped: the operation stopped before " + d + " ran"
						case !stepOK(o.Status):
							return "skipped: " + d + " did not succeed"
						}
					}
					return ""
				}
				deps := stepDeps{
					wait: waitDeps,
					// Whether to queue the step's job before its
					// dependencies end: once every one of them is ahead
					// (its last job launched, or queued with its own
					// dependencies launched), and one still runs. Never
					// more than two steps ahead of what runs, so that a
					// job has its dependency's time and its dependency's
					// dependency's to start, fetch its module and run
					// init (the runner keeps waiting jobs out of its
					// working places, and takes the ones it has no
					// waiting place for once their inputs are given).
					prestart: func(ctx workflow.Context) bool {
						if !st.Prestart || !runner.DeferredInputs {
							return false
						}
						_ = workflow.Await(ctx, func() bool {
							for _, d := range st.After {
								if _, ok := outcomes[d]; !ok && !ahead(d) && !(stop && !started[d]) {
									return false
								}
							}
							return true
						})
						running := false
						for _, d := range st.After {
							o, ok := outcomes[d]
							switch {
							case ok && !stepOK(o.Status):
								return false // it is skipped: waitDeps says so
							case !ok && ahead(d):
								running = true
							case !ok:
								return false // never started (the operation stopped): waitDeps says so
							}
						}
						return running && ctx.Err() == nil
					},
					queued:   func() { queued[st.Name] = true },
					launched: func() { launched[st.Name] = true },
					ended: func(step string) bool {
						_, ok := outcomes[step]
						return ok
					},
					failed: func() string {
						for _, d := range st.After {
							if o, ok := outcomes[d]; ok && !stepOK(o.Status) {
								return d
							}
						}
						return ""
					},
					syncsBuild: syncsInJob(st),
				}
				results.Send(gctx, runStep(gctx, in.OperationID, plan, st, approvals[st.Name], deps))
			})
		}
		if running == 0 {
			break
		}
		var o stepOutcome
		results.Receive(ctx, &o)
		running--
		outcomes[o.Name] = o
		if o.Status == store.StepDenied || ctx.Err() != nil {
			stop = true
		}
	}

	var failures []string
	status := store.OpSucceeded
	for _, st := range plan.Steps {
		o, ok := outcomes[st.Name]
		if !ok {
			o = stepOutcome{Name: st.Name, Status: store.StepSkipped}
		}
		res.Steps[st.Name] = o.Status
		switch o.Status {
		case store.StepFailed:
			status = store.OpFailed
			failures = append(failures, fmt.Sprintf("%s: %s", st.Name, o.Error))
		case store.StepDenied:
			if status != store.OpFailed {
				status = store.OpDenied
			}
		case store.StepCancelled:
			if status == store.OpSucceeded {
				status = store.OpCancelled
			}
		}
	}
	if ctx.Err() != nil {
		status = store.OpCancelled
	}
	installStatus := plan.SucceededInstallStatus
	switch status {
	case store.OpFailed:
		installStatus = plan.FailedInstallStatus
	case store.OpDenied, store.OpCancelled:
		installStatus = plan.InterruptedInstallStatus
	}
	if plan.PlanOnly && status == store.OpSucceeded {
		installStatus = plan.InterruptedInstallStatus
	}
	return finish(status, joinLines(failures), installStatus)
}

// stepOK: the steps after it may go on (in a plan-only operation, after a
// plan).
func stepOK(status string) bool {
	return status == store.StepSucceeded || status == store.StepNoChanges || status == store.StepPlanned
}

// stepDeps is how a step waits for the steps it comes after.
type stepDeps struct {
	// wait waits until they ended; skipped says why the step cannot run.
	wait func(workflow.Context) (skipped string)
	// prestart waits until the step's job may be queued before they end,
	// and says whether to (false: wait for them as usual).
	prestart func(workflow.Context) bool
	// queued records that the step's job is queued, its inputs to come.
	queued func()
	// launched records that the step's last job is queued with its inputs.
	launched func()
	// ended says whether a step of the operation has ended.
	ended func(step string) bool
	// failed names a step it comes after that ended without succeeding.
	failed func() string
	// syncsBuild: the step's plan_apply job syncs its build (no sync job).
	syncsBuild bool
}

// skipError ends a step as skipped (a dependency did not succeed).
type skipError struct{ msg string }

func (e skipError) Error() string { return e.msg }

// runStep plans one step, waits for approval if the install asks for it,
// and applies exactly the approved plan. When no approval is needed (and
// not plan-only), one plan_apply job plans and applies; it may be
// queued while the step's dependencies still run, so that the runner
// fetches the module and runs init meanwhile, and get its variables once
// they are done. The store activities on this path are local activities.
func runStep(ctx workflow.Context, opID string, plan activities.OperationPlan, st activities.StepSpec, approval workflow.Channel,
	deps stepDeps) stepOutcome {
	record := localActivity(ctx)
	out := stepOutcome{Name: st.Name}
	setStatus := func(status, msg string) stepOutcome {
		out.Status, out.Error = status, msg
		c := ctx
		if ctx.Err() != nil {
			c, _ = workflow.NewDisconnectedContext(ctx)
		}
		_ = workflow.ExecuteLocalActivity(localActivity(c), a.SetStepStatus, opID, st.Name, status, msg).Get(c, nil)
		return out
	}
	jobPolicy := JobPolicy{MaxAttempts: 3, Wait: plan.JobWait}
	syncBuild, deferRegistry := "", false // the build the plan_apply job syncs, and whether the registry comes with its inputs
	runTerraform := func(operation, planJobID string, deferInputs bool) (activities.JobResult, error) {
		in := activities.TerraformJobInput{OperationID: opID, Step: st.Name, Operation: operation, Destroy: st.Destroy,
			PlanJobID: planJobID, Key: workflow.GetInfo(ctx).WorkflowExecution.ID + "/" + opID + "/" + st.Name + "/" + operation,
			DeferInputs: deferInputs}
		if operation == protocol.TerraformPlanApply {
			in.SyncBuildID, in.DeferRegistry = syncBuild, deferRegistry
		}
		p := jobPolicy
		if operation == protocol.TerraformPlanApply {
			p.Queued = func(ctx workflow.Context, jobID string) error {
				if deferInputs {
					deps.queued()
					if skipped := deps.wait(ctx); skipped != "" {
						return skipError{skipped}
					}
					if err := workflow.ExecuteLocalActivity(record, a.ProvideTerraformInputs, in, jobID).Get(ctx, nil); err != nil {
						return err
					}
				}
				deps.launched()
				return nil
			}
		}
		return RunJob(ctx, func(c workflow.Context) workflow.Future {
			return workflow.ExecuteLocalActivity(c, a.EnqueueTerraformJob, in)
		}, p)
	}

	done, status, msg := false, "", ""
	switch {
	case hasBuild(st) && deps.syncsBuild:
		build, status, msg := readyBuildUnlessFailed(ctx, opID, st, deps)
		if status != "" {
			return setStatus(status, msg)
		}
		syncBuild = build.BuildID
	case hasBuild(st):
		done, status, msg = deliverBuild(ctx, opID, plan, st, jobPolicy)
		if done && status != store.StepSucceeded && status != store.StepPlanned {
			return setStatus(status, msg)
		}
	}
	oneJob := !plan.PlanOnly && plan.ApprovalMode != store.Prompt
	deferInputs := !done && oneJob && st.Type == appconfig.TypeTerraformModule && deps.prestart(ctx)
	deferRegistry = deferInputs && syncBuild != "" && slices.Contains(st.After, store.SandboxStep) && !deps.ended(store.SandboxStep)
	if !deferInputs {
		if skipped := deps.wait(ctx); skipped != "" {
			if ctx.Err() != nil {
				return setStatus(store.StepCancelled, "operation cancelled")
			}
			return setStatus(store.StepSkipped, skipped)
		}
	}
	if done {
		if st.Type == appconfig.TypeContainerImage && status == store.StepSucceeded {
			if err := workflow.ExecuteLocalActivity(localActivity(ctx), a.RecordImage, opID, st.Name).Get(ctx, nil); err != nil {
				return setStatus(store.StepFailed, rootMessage(err))
			}
		}
		return setStatus(status, msg)
	}
	switch {
	case st.Type == appconfig.TypeHelmChart:
		return runChartStep(ctx, opID, plan, st, approval, setStatus, jobPolicy)
	case st.Type == appconfig.TypeContainerImage: // a teardown: nothing runs
		if plan.PlanOnly {
			return setStatus(store.StepPlanned, "")
		}
		if err := workflow.ExecuteLocalActivity(localActivity(ctx), a.ForgetComponent, opID, st.Name).Get(ctx, nil); err != nil {
			return setStatus(store.StepFailed, rootMessage(err))
		}
		return setStatus(store.StepSucceeded, "")
	}

	planOp, recordPlan := protocol.TerraformPlan, a.RecordPlan
	if oneJob {
		planOp, recordPlan = protocol.TerraformPlanApply, a.RecordPlanApply
	}
	planJob, err := runTerraform(planOp, "", deferInputs)
	var skipped skipError
	switch {
	case errors.As(err, &skipped) && ctx.Err() == nil:
		return setStatus(store.StepSkipped, skipped.msg)
	case err != nil:
		return setStatus(interrupted(ctx, err))
	}
	var summary activities.PlanSummary
	if err := workflow.ExecuteLocalActivity(record, recordPlan, opID, st.Name, planJob.JobID).Get(ctx, &summary); err != nil {
		return setStatus(store.StepFailed, rootMessage(err))
	}
	switch {
	case summary.Failed:
		return setStatus(store.StepFailed, summary.Error)
	case !summary.HasChanges:
		return setStatus(store.StepNoChanges, "")
	case summary.Applied:
		return setStatus(store.StepSucceeded, "")
	case plan.PlanOnly:
		return setStatus(store.StepPlanned, "")
	}
	if plan.ApprovalMode == store.Prompt {
		if status, msg := awaitApproval(ctx, approval, setStatus); status != "" {
			return setStatus(status, msg)
		}
	}
	applyJob, err := runTerraform(protocol.TerraformApply, planJob.JobID, false)
	if err != nil {
		return setStatus(interrupted(ctx, err))
	}
	var applied activities.ApplySummary
	if err := workflow.ExecuteLocalActivity(record, a.RecordApply, opID, st.Name, applyJob.JobID).Get(ctx, &applied); err != nil {
		return setStatus(store.StepFailed, rootMessage(err))
	}
	if applied.Failed {
		return setStatus(store.StepFailed, applied.Error)
	}
	return setStatus(store.StepSucceeded, "")
}

// startAfter is what a step waits for before it starts. A step that
// deploys a build starts once the sandbox (which provides the install's
// registry) is done: its build and sync then overlap the deploys of its
// dependencies, and it waits for them before its own deploy. One whose
// plan_apply job syncs the build (syncsBuild) and may be queued before the
// sandbox is done starts at once.
func startAfter(st activities.StepSpec, syncsBuild bool) []string {
	switch {
	case !hasBuild(st):
		return st.After
	case syncsBuild && st.Prestart && st.PrestartBeforeSandbox:
		return nil
	}
	if slices.Contains(st.After, store.SandboxStep) {
		return []string{store.SandboxStep}
	}
	return nil
}

// hasBuild says the step deploys a build: a component deploy (a destroy
// uses what the install runs).
func hasBuild(st activities.StepSpec) bool {
	return !st.Destroy && st.Name != store.SandboxStep
}

// deliverBuild waits for the component's build, then has the install's
// runner copy it by digest into the install's own registry. done says the
// step ended here: with an error, or because copying the image was the
// whole deploy (container_image).
func deliverBuild(ctx workflow.Context, opID string, plan activities.OperationPlan, st activities.StepSpec, p JobPolicy) (done bool, status, msg string) {
	build, status, msg := readyBuild(ctx, opID, st)
	if status != "" {
		return true, status, msg
	}
	key := workflow.GetInfo(ctx).WorkflowExecution.ID + "/" + opID + "/" + st.Name + "/sync"
	job, err := RunJob(ctx, func(c workflow.Context) workflow.Future {
		return workflow.ExecuteLocalActivity(c, a.EnqueueSyncJob, activities.SyncJobInput{
			OperationID: opID, Step: st.Name, BuildID: build.BuildID, Key: key})
	}, p)
	if err != nil {
		status, msg = interrupted(ctx, err)
		return true, status, msg
	}
	var synced activities.SyncSummary
	if err := workflow.ExecuteLocalActivity(localActivity(ctx), a.RecordSync, opID, st.Name, build.BuildID, job.JobID).Get(ctx, &synced); err != nil {
		return true, store.StepFailed, rootMessage(err)
	}
	switch {
	case synced.Failed:
		return true, store.StepFailed, synced.Error
	case st.Type == appconfig.TypeContainerImage && plan.PlanOnly:
		return true, store.StepPlanned, ""
	case st.Type == appconfig.TypeContainerImage:
		return true, store.StepSucceeded, ""
	}
	return false, "", ""
}

// readyBuild waits for the step's build. status is what the step ends
// with when there is none to deploy ("" when there is).
func readyBuild(ctx workflow.Context, opID string, st activities.StepSpec) (build activities.BuildSummary, status, msg string) {
	build, err := awaitBuild(ctx, opID, st.Name)
	if err != nil {
		status, msg = interrupted(ctx, err)
		return build, status, msg
	}
	if build.Status != store.BuildSucceeded {
		return build, store.StepFailed, "build " + build.BuildID + " failed: " + build.Error
	}
	return build, "", ""
}

// readyBuildUnlessFailed is readyBuild for a step that started before the
// steps it comes after ended: it stops waiting for the build (which goes on:
// it is the app's) as soon as one of them fails, and the step is skipped.
func readyBuildUnlessFailed(ctx workflow.Context, opID string, st activities.StepSpec, deps stepDeps) (build activities.BuildSummary, status, msg string) {
	bctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	done := false
	workflow.Go(bctx, func(c workflow.Context) {
		build, status, msg = readyBuild(c, opID, st)
		done = true
	})
	failed := ""
	_ = workflow.Await(ctx, func() bool {
		failed = deps.failed()
		return done || failed != ""
	})
	switch {
	case done:
		return build, status, msg
	case failed != "":
		return build, store.StepSkipped, "skipped: " + failed + " did not succeed"
	}
	return build, store.StepCancelled, "operation cancelled"
}

// awaitApproval waits for the step's approval signal. It returns the
// status the step ends with when it is not approved ("" when it is).
func awaitApproval(ctx workflow.Context, approval workflow.Channel, setStatus func(string, string) stepOutcome) (status, msg string) {
	setStatus(store.StepWaitingApproval, "")
	var ap Approval
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(approval, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, &ap) })
	sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {})
	sel.Select(ctx)
	switch {
	case ctx.Err() != nil:
		return store.StepCancelled, "operation cancelled while waiting for approval"
	case !ap.Approve:
		return store.StepDenied, "plan denied"
	}
	return "", ""
}

// interrupted turns a RunJob error into a step status.
func interrupted(ctx workflow.Context, err error) (string, string) {
	if ctx.Err() != nil {
		return store.StepCancelled, "operation cancelled"
	}
	return store.StepFailed, rootMessage(err)
}

// rootMessage is the innermost message of a Temporal error chain, which is
// the one a person wants to read.
func rootMessage(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			var app *temporal.ApplicationError
			if errors.As(err, &app) {
				return app.Message()
			}
			return err.Error()
		}
		err = next
	}
}

func joinLines(l []string) string {
	slices.Sort(l)
	out := ""
	for i, s := range l {
		if i > 0 {
			out += "\n"
		}
		out += s
	}
	return out
}
