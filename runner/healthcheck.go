package runner

import (
	"github.com/outpost-dev/outpost/protocol"
)

// The health check of a self-update, seen from the new version (process or
// pod alike): the runner asks on its first heartbeat whether an update of it
// to its version is under way with its health job still to run
// (protocol.RunnerHeartbeatResponse.HealthCheck). While it is, the runner
// takes only noop jobs and its readiness probe answers 503 "checking", so in
// helm mode the rolling update keeps the old pod until the new one ran the
// health job: the same gate as a new binary's. It asks on every heartbeat
// until the answer is no (the update ended, or the health job ran).

// healthCheck is the runner's part in its update's health check.
type healthCheck struct {
	r *Runner
}

// asking says whether the next heartbeat asks.
func (h healthCheck) asking() bool { return h.r.checking.Load() }

// answered takes a heartbeat's answer to a request that asked; first says
// it is the runner's first heartbeat.
func (h healthCheck) answered(req protocol.RunnerHeartbeatRequest, resp protocol.RunnerHeartbeatResponse, first bool) {
	if !req.AskHealthCheck {
		return
	}
	now := resp.HealthCheck && !h.r.passed.Load()
	switch was := h.r.checking.Swap(now); {
	case now && first:
		h.r.log.Info("this version is on trial in an update: taking only its health job until it ran", "version", Version)
	case was && !now && !first:
		h.r.log.Info("the update's health check is over: taking every job", "version", Version)
	}
}

// completed notes a noop job that succeeded: the check passed.
func (h healthCheck) completed(job protocol.Job, req protocol.CompleteRequest) {
	if job.Type != protocol.JobTypeNoop || req.Status != protocol.StatusSucceeded {
		return
	}
	h.r.passed.Store(true)
	if h.r.checking.Swap(false) {
		h.r.log.Info("the update's health check passed: taking every job", "version", Version)
	}
}

// onlyNoop says whether claims ask for noop jobs only.
func (r *Runner) onlyNoop() bool { return r.trial != nil || r.checking.Load() }
