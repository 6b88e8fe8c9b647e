package runner

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"time"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/customer"
)

// The customer's side of the runner (package customer): the policy it
// reports and enforces, the pause, the consents and the history.

// customerWatch is how often the runner reads its state directory for a
// pause, a resume or a consent the customer gave meanwhile.
const customerWatch = time.Second

// customerSide is the runner's view of what its customer decided.
type customerSide struct {
	policy  customer.Policy
	state   customer.State
	history *customer.History
	// pinnedPause: Config.Paused (a chart value) pauses the runner from its
	// start, whatever the state directory says.
	pinnedPause *time.Time
}

func newCustomerSide(cfg Config) *customerSide {
	st := customer.State{Dir: cfg.StateDir}
	c := &customerSide{policy: cfg.Policy, state: st, history: st.OpenHistory(cfg.HistoryRetention)}
	c.policy.Concurrency = cfg.Concurrency
	if cfg.Paused {
		now := time.Now().UTC().Truncate(time.Second)
		c.pinnedPause = &now
	}
	return c
}

// report is the customer state as the heartbeat carries it; a state
// directory that cannot be read counts as paused (the customer's word is
// not known, so nothing is claimed).
func (c *customerSide) report() protocol.CustomerState {
	st, err := c.state.Report()
	if err != nil {
		now := time.Now().UTC()
		st.PausedSince = &now
	}
	if c.pinnedPause != nil && st.PausedSince == nil {
		st.PausedSince = c.pinnedPause
	}
	return st
}

// refuse says why the policy refuses job, or nil.
func (c *customerSide) refuse(job protocol.Job) error {
	consents, err := c.state.Consents(time.Now())
	if err != nil {
		return err
	}
	return c.policy.CheckJob(job, consents)
}

// record appends the job's end to the history; a history that cannot be
// written is logged by the caller's logger.
func (r *Runner) record(job protocol.Job, req protocol.CompleteRequest, refused string) {
	e := customer.NewEntry(job)
	e.Status, e.ExitCode, e.Error, e.Refused = req.Status, req.ExitCode, req.Error, refused
	if refused != "" {
		e.Status = "refused"
	}
	if len(req.Outputs) > 0 && job.Type == protocol.JobTypeTerraform {
		var out struct {
			PolicyResults json.RawMessage `json:"policy_results"`
		}
		if json.Unmarshal(req.Outputs, &out) == nil {
			e.PolicyResults = out.PolicyResults
		}
	}
	if err := r.customer.history.Append(e); err != nil {
		r.log.Error("the customer's history could not be written", "job", job.ID, "err", err)
	}
}

// paused says whether the customer paused the runner.
func (r *Runner) paused() bool {
	return r.customer.report().PausedSince != nil
}

// watchCustomer sends a heartbeat as soon as the customer pauses, resumes
// or consents, so the control plane shows it (and stops handing jobs to a
// paused runner) at once rather than at the next heartbeat.
func (r *Runner) watchCustomer(ctx context.Context) {
	last := r.customer.report()
	for sleep(ctx, customerWatch) == nil {
		r.switchIfAccepted(ctx)
		now := r.customer.report()
		if reflect.DeepEqual(now, last) {
			continue
		}
		if (now.PausedSince != nil) != (last.PausedSince != nil) {
			r.log.Info("the customer paused or resumed the runner", "paused", now.PausedSince != nil)
		}
		last = now
		if err := r.sendHeartbeat(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("runner heartbeat failed", "err", err)
		}
	}
}

// allowedCapabilities drops, from what the runner can do, the job types the
// customer's policy refuses.
func allowedCapabilities(all []string, p customer.Policy) []string {
	allowed := p.Report(all).JobTypes
	return slices.DeleteFunc(slices.Clone(all), func(c string) bool {
		return isJobType(c) && !slices.Contains(allowed, c)
	})
}

// isJobType: c is a job type, not a feature (deferred inputs, module sync).
func isJobType(c string) bool {
	return c != protocol.CapabilityDeferredInputs && c != protocol.CapabilityModuleSync
}
