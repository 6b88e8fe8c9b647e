package workflows

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/protocol"
)

// changeReleaseHealthGate gates the health gate's commands (a release with
// a soak): releases begun before it run none.
const changeReleaseHealthGate = "release-health-gate"

// releaseHealthPoll is how often the gate reads a batch's health during its
// soak, at least: a soak longer than releaseHealthPolls of them reads it
// that many times (a history of bounded size).
const (
	releaseHealthPoll  = 30 * time.Second
	releaseHealthPolls = 120
)

// gate is a batch's health gate: it waits the release's soak after the
// batch's deploys, reading the deployed installs' health. One that turns
// unhealthy, or is not healthy when the soak ends, fails the gate: the
// batch is rolled back (on_unhealthy rollback) and the release halts until
// it is resumed (it goes on with the next batch) or cancelled (false).
func (r *release) gate(ctx workflow.Context, batch int, installs, deployed []string) bool {
	if len(deployed) == 0 {
		return true
	}
	bad, why := r.soak(ctx, deployed)
	if why == "" || r.cancelled {
		return !r.cancelled
	}
	if bad == "" { // the health could not be read: nothing is known to roll back for
		return r.halt(ctx, why)
	}
	if err := runLocal(ctx, contract.MarkReleaseInstallUnhealthy, r.id, bad, why).Get(ctx, nil); err != nil {
		r.lost.add(ctx, "the unhealthy install", err)
	}
	if r.plan.OnUnhealthy == contract.OnUnhealthyRollback {
		why += r.rollback(ctx, batch, installs)
	}
	return r.halt(ctx, why)
}

// soak reads the installs' health until the soak ends (or the release is
// cancelled); it returns the first install that failed it and why (why ""
// when none did; install "" when the health could not be read).
func (r *release) soak(ctx workflow.Context, installs []string) (string, string) {
	start := workflow.Now(ctx)
	end, poll := start.Add(r.plan.Soak), max(releaseHealthPoll, r.plan.Soak/releaseHealthPolls)
	for {
		final := !workflow.Now(ctx).Before(end)
		var hs []contract.InstallHealth
		hctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
			StartToCloseTimeout: 30 * time.Second, ScheduleToCloseTimeout: 2 * time.Minute,
			RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 30 * time.Second},
		})
		if err := callLocal(hctx, contract.ReleaseBatchHealth, r.id, installs).Get(ctx, &hs); err != nil {
			return "", "the health gate could not read the batch's health: " + rootMessage(err)
		}
		for _, h := range hs {
			if h.State == protocol.HealthUnhealthy || (final && h.State != protocol.HealthHealthy) {
				return h.InstallID, gateFailure(h, workflow.Now(ctx).Sub(start), r.plan.Soak, final)
			}
		}
		if final {
			return "", ""
		}
		wait := min(poll, end.Sub(workflow.Now(ctx)))
		if _, _ = workflow.AwaitWithTimeout(ctx, wait, func() bool { return r.cancelled }); r.cancelled {
			return "", ""
		}
	}
}

// gateFailure says why an install failed its batch's health gate: the
// install, its state, the component, object and condition.
func gateFailure(h contract.InstallHealth, at, soak time.Duration, final bool) string {
	when := fmt.Sprintf("%s into the %s soak", at.Round(time.Second), soak)
	if final {
		when = fmt.Sprintf("at the end of the %s soak", soak)
	}
	why := []string{fmt.Sprintf("install %s is %s %s", h.InstallName, h.State, when)}
	for _, s := range []string{h.Component, h.Object, h.Condition} {
		if s != "" {
			why = append(why, s)
		}
	}
	return strings.Join(why, ": ")
}

// rollback brings the batch's installs (batch: its index; said from 1) back to the versions they ran
// before the release, in parallel and at once (a maintenance window is not
// waited for: it undoes the release's own change); it says what it did,
// to follow the gate's failure.
func (r *release) rollback(ctx workflow.Context, batch int, installs []string) string {
	whys := inParallel(ctx, installs, func(ctx workflow.Context, id string) string {
		return r.operate(ctx, id, contract.BeginReleaseRollback, contract.FinishReleaseRollback)
	})
	var failed []string
	for _, why := range whys {
		if why != "" {
			failed = append(failed, why)
		}
	}
	if len(failed) == 0 {
		return fmt.Sprintf("; batch %d rolled back to the versions it ran before", batch+1)
	}
	return fmt.Sprintf("; batch %d rolled back to the versions it ran before, except: %s", batch+1, strings.Join(failed, "; "))
}
