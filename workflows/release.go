package workflows

import (
	"slices"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/workflow"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
)

// release is a running release's state: what it was asked by signal.
type release struct {
	id                string
	plan              contract.ReleasePlan
	paused, cancelled bool
	resumed           bool // a resume arrived since the release halted
	failed            int
	// lost: the status writes that failed on the way (its final status's
	// message says them).
	lost unrecorded
}

// Release deploys a config version to an app's installs batch by batch:
// each install's deploy is its deploy_config operation, run as a child
// workflow once the install's maintenance window is open. A batch that
// brings the failed installs to the threshold halts the release until it is
// resumed (the failed ones are deployed again) or cancelled; pause and
// cancel take effect between batches (and end a wait for a window). With a
// soak, each batch then passes its health gate (releasegate.go) first.
func Release(ctx workflow.Context, in contract.ReleaseInput) error {
	r := &release{id: in.ReleaseID}
	if err := runLocal(ctx, contract.LoadRelease, in.ReleaseID).Get(ctx, &r.plan); err != nil {
		return err
	}
	r.listen(ctx)
	gated := r.plan.Soak > 0 && workflow.GetVersion(ctx, changeReleaseHealthGate, workflow.DefaultVersion, 1) == 1
	for i, batch := range r.plan.Batches {
		if i > 0 && r.plan.PauseBetween > 0 {
			_, _ = workflow.AwaitWithTimeout(ctx, r.plan.PauseBetween, func() bool { return r.cancelled })
		}
		if !r.awaitUnpaused(ctx) {
			return r.cancel(ctx)
		}
		deployed, ok := r.runBatch(ctx, batch)
		if !ok || (gated && !r.cancelled && !r.gate(ctx, i, batch, deployed)) {
			return r.cancel(ctx)
		}
	}
	if r.cancelled { // while the last batch waited for windows
		return r.cancel(ctx)
	}
	return runLocal(ctx, contract.SetReleaseStatus, r.id, status.ReleaseSucceeded, r.lost.note()).Get(ctx, nil)
}

// setStatus records a status the release goes on from (paused, running,
// halted): one that cannot be recorded is logged, and said when it ends.
func (r *release) setStatus(ctx workflow.Context, st status.Release, msg string) {
	if err := runLocal(ctx, contract.SetReleaseStatus, r.id, st, msg).Get(ctx, nil); err != nil {
		r.lost.add(ctx, "the release's status "+string(st), err)
	}
}

// listen receives the release's control signals.
func (r *release) listen(ctx workflow.Context) {
	ch := workflow.GetSignalChannel(ctx, contract.ReleaseSignal)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			var c contract.ReleaseControl
			ch.Receive(ctx, &c)
			switch c.Action {
			case contract.ReleasePause:
				r.paused = true
			case contract.ReleaseResume:
				r.paused, r.resumed = false, true
			case contract.ReleaseCancel:
				r.cancelled = true
			}
		}
	})
}

// awaitUnpaused waits while the release is paused; false: it was
// cancelled.
func (r *release) awaitUnpaused(ctx workflow.Context) bool {
	if r.paused && !r.cancelled {
		r.setStatus(ctx, status.ReleasePaused, "")
		_ = workflow.Await(ctx, func() bool { return !r.paused || r.cancelled })
		r.setStatus(ctx, status.ReleaseRunning, "")
	}
	return !r.cancelled
}

// runBatch deploys a batch; while its failures bring the release to the
// threshold, it halts and, once resumed, deploys the failed ones again. It
// returns the installs whose deploy succeeded; false: the release was
// cancelled.
func (r *release) runBatch(ctx workflow.Context, installs []string) ([]string, bool) {
	deployed := slices.Clone(installs)
	for len(installs) > 0 {
		failed, why := r.deployAll(ctx, installs)
		deployed = slices.DeleteFunc(deployed, func(id string) bool { return slices.Contains(failed, id) })
		r.failed += len(failed)
		if r.failed < r.plan.FailureThreshold || r.plan.FailureThreshold == 0 {
			return deployed, true
		}
		if !r.halt(ctx, why) {
			return nil, false
		}
		r.failed -= len(failed)
		deployed, installs = append(deployed, failed...), failed
	}
	return deployed, true
}

// halt halts the release saying why until it is resumed (true) or
// cancelled (false).
func (r *release) halt(ctx workflow.Context, why string) bool {
	r.resumed = false
	r.setStatus(ctx, status.ReleaseHalted, why)
	_ = workflow.Await(ctx, func() bool { return r.resumed || r.cancelled })
	if r.cancelled {
		return false
	}
	r.setStatus(ctx, status.ReleaseRunning, "")
	return true
}

// deployAll deploys installs in parallel; it returns those that failed
// and why the first did.
func (r *release) deployAll(ctx workflow.Context, installs []string) ([]string, string) {
	whys := inParallel(ctx, installs, r.deploy)
	var failed []string
	first := ""
	for i, why := range whys {
		if why != "" {
			failed = append(failed, installs[i])
			if first == "" {
				first = why
			}
		}
	}
	return failed, first
}

// inParallel runs do for each install in parallel; it returns what each
// said.
func inParallel(ctx workflow.Context, installs []string, do func(workflow.Context, string) string) []string {
	out := make([]string, len(installs))
	wg := workflow.NewWaitGroup(ctx)
	for i, id := range installs {
		wg.Add(1)
		workflow.Go(ctx, func(ctx workflow.Context) {
			defer wg.Done()
			out[i] = do(ctx, id)
		})
	}
	wg.Wait(ctx)
	return out
}

// deploy runs one install's deploy_config as a child workflow once its
// maintenance window is open; it returns why it failed, "" when it
// succeeded.
func (r *release) deploy(ctx workflow.Context, installID string) string {
	if err := r.awaitWindow(ctx, installID); err != nil {
		return rootMessage(err)
	}
	if r.cancelled {
		return "" // it stays waiting: the cancel skips it
	}
	return r.operate(ctx, installID, contract.BeginReleaseDeploy, contract.FinishReleaseDeploy)
}

// operate runs one install's deploy_config operation, begun and recorded
// by the activities begin and finish, as a child workflow (abandoned, not
// killed, if the release's workflow ends: the operation finishes and frees
// the install); it returns why it failed, "" when it succeeded.
func (r *release) operate(ctx workflow.Context, installID, begin, finish string) string {
	var d contract.ReleaseDeploy
	if err := runLocal(ctx, begin, r.id, installID).Get(ctx, &d); err != nil {
		return rootMessage(err)
	}
	if d.Failed != "" {
		return d.Failed
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            d.WorkflowID,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
	})
	child := workflow.ExecuteChildWorkflow(cctx, contract.WorkflowDeployConfig, contract.OperationInput{OperationID: d.OperationID})
	startErr := ""
	if err := child.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
		startErr = "the operation's workflow could not be started: " + rootMessage(err)
	} else {
		_ = child.Get(ctx, nil) // how it ended is in the store
	}
	var why string
	if err := runLocal(ctx, finish, r.id, installID, d.OperationID, startErr).Get(ctx, &why); err != nil {
		return rootMessage(err)
	}
	return why
}

// awaitWindow waits, with a timer, until the install's next maintenance
// window opens (at once when one is open or it has none), the release
// showing the install waiting until then; a cancel ends the wait.
func (r *release) awaitWindow(ctx workflow.Context, installID string) error {
	var w contract.Window
	if err := runLocal(ctx, contract.NextMaintenanceWindow, installID).Get(ctx, &w); err != nil {
		return err
	}
	wait := w.Start.Sub(workflow.Now(ctx))
	if w.None || w.Open || wait <= 0 {
		return nil
	}
	if err := runLocal(ctx, contract.WaitForWindow, r.id, installID, w.Start).Get(ctx, nil); err != nil {
		return err
	}
	_, err := workflow.AwaitWithTimeout(ctx, wait, func() bool { return r.cancelled })
	return err
}

// cancel ends a cancelled release: the installs it did not deploy are
// skipped.
func (r *release) cancel(ctx workflow.Context) error {
	if err := runLocal(ctx, contract.SkipReleaseInstalls, r.id).Get(ctx, nil); err != nil {
		return err
	}
	return runLocal(ctx, contract.SetReleaseStatus, r.id, status.ReleaseCancelled, r.lost.note()).Get(ctx, nil)
}
