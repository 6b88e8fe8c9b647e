package activities

import (
	"context"
	"fmt"
	"time"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// The outputs a health-check action's step may write to say more than
// "succeeded": its state (healthy, degraded or unhealthy) and why.
const (
	HealthOutput       = "health"
	HealthReasonOutput = "health_reason"
)

// maxReason bounds the log line a failed health check's reason quotes.
const maxReason = 300

// recordHealth records a health-check action's finished run as its checks'
// health (docs/architecture/health.md, "Health-check actions"). A run that
// was cancelled, or refused before it ran, is no result.
func (a *Actions) recordHealth(ctx context.Context, runID string, st status.Job) error {
	if st != status.JobSucceeded && st != status.JobFailed {
		return nil
	}
	ar, err := a.load(ctx, runID)
	if err != nil || !ar.action.Health {
		return err
	}
	steps, err := a.store.ListActionRunSteps(ctx, runID)
	if err != nil {
		return err
	}
	state, why, err := a.runHealth(ctx, st, steps)
	if err != nil {
		return err
	}
	var stale *time.Time
	if at, ok := ar.action.HealthStaleAfter(ar.run.CreatedAt); ok {
		stale = &at
	}
	object := fmt.Sprintf("action %s (run %s)", ar.action.Name, runID)
	var results []store.CheckResult
	for _, check := range ar.action.HealthChecks() {
		results = append(results, store.CheckResult{Check: check, State: state, Object: object, Condition: why, StaleAfter: stale})
	}
	return a.store.RecordCheckHealth(ctx, ar.run.OrgID, ar.inst.ID, appconfig.HealthCheckPrefix+ar.action.Name, results)
}

// runHealth is a finished run's health and why: a failed run is unhealthy
// (its failed step, its error and its last log line); a succeeded one is
// what its steps' plain health output says (the last step's that says one
// wins), healthy when none does.
func (a *Actions) runHealth(ctx context.Context, st status.Job, steps []store.ActionRunStep) (string, string, error) {
	if st == status.JobFailed {
		for _, s := range steps {
			if s.Status != status.JobFailed && s.Status != status.JobCancelled {
				continue
			}
			why := fmt.Sprintf("step %s failed: %s", s.Name, s.Error)
			if s.JobID != nil {
				line, err := a.store.LastLogLine(ctx, *s.JobID, maxReason)
				if err != nil {
					return "", "", err
				}
				if line != "" {
					why += ": " + line
				}
			}
			return protocol.HealthUnhealthy, why, nil
		}
		return protocol.HealthUnhealthy, "the run failed", nil
	}
	state, why := protocol.HealthHealthy, "succeeded"
	for _, s := range steps {
		if v, ok := s.Outputs[HealthOutput]; ok {
			state, why = v, s.Outputs[HealthReasonOutput]
			if why == "" {
				why = fmt.Sprintf("step %s says %s", s.Name, v)
			}
		}
	}
	switch state {
	case protocol.HealthHealthy, protocol.HealthDegraded, protocol.HealthUnhealthy:
		return state, why, nil
	}
	return protocol.HealthUnhealthy, fmt.Sprintf("output %s=%q is not healthy, degraded or unhealthy", HealthOutput, state), nil
}
