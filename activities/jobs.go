package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/notify"
)

// Activities holds what the activities need. Register a *Activities with the
// worker; workflows call its methods by reference.
type Activities struct {
	Store  *store.Store
	Logger *slog.Logger
	// AwaitCheck is how often AwaitJob re-reads the job when no notification
	// came (a safety net for a lost notification), and heartbeats Temporal.
	// Default 5s.
	AwaitCheck time.Duration
	// Operations configures install operations (provision, deploy…).
	Operations OperationConfig

	configs configCache // parsed app config versions (they never change)
}

// EnqueueJob queues a job on an install's runner; idempotent by Key.
func (a *Activities) EnqueueJob(ctx context.Context, in contract.EnqueueJobInput) (_ contract.JobRef, err error) {
	defer classified(&err)
	inst, r, err := a.installRunner(ctx, in.InstallID)
	if err != nil {
		return contract.JobRef{}, err
	}
	j, created, err := a.Store.EnqueueJob(ctx, store.JobSpec{Key: in.Key, OrgID: inst.OrgID, RunnerID: r.ID,
		InstallID: &inst.ID, Type: in.Type, Manifest: in.Manifest, TimeoutMS: in.TimeoutMS})
	if err != nil {
		return contract.JobRef{}, err
	}
	return contract.JobRef{JobID: j.ID, Created: created}, nil
}

func (a *Activities) installRunner(ctx context.Context, installID string) (store.Install, store.Runner, error) {
	inst, err := a.Store.GetInstallByID(ctx, installID)
	if err != nil {
		return store.Install{}, store.Runner{}, err
	}
	r, err := a.Store.GetInstallRunner(ctx, inst.OrgID, inst.ID)
	return inst, r, err
}

// AwaitJob waits until the job's current attempt ends, heartbeating Temporal
// every AwaitCheck meanwhile (the heartbeat timeout is longer). It is woken
// by the store's bus; it re-reads the row only when woken or every
// AwaitCheck. A worker that dies mid-await is replaced by the activity's
// retry on another worker, which awaits the same job: nothing is enqueued
// twice.
//
// Outputs are returned only when withOutputs is set: they land in Temporal
// history, so jobs whose outputs may be large or secret (terraform plans and
// outputs) leave them in the store and callers read them there.
func (a *Activities) AwaitJob(ctx context.Context, jobID string, withOutputs bool) (_ contract.JobResult, err error) {
	defer classified(&err)
	woke, unsub := a.Store.Bus().Subscribe(notify.JobTopic(jobID))
	defer unsub()
	tick := time.NewTicker(a.awaitCheck())
	defer tick.Stop()
	for {
		j, err := a.Store.GetJobOutcome(ctx, jobID)
		if err != nil {
			return contract.JobResult{}, err
		}
		if status.JobTerminal(j.Status) {
			res := contract.JobResult{JobID: j.ID, Status: j.Status, Attempt: j.Attempt, ExitCode: j.ExitCode, Error: j.Error}
			if withOutputs {
				res.Outputs = json.RawMessage(nonEmpty(j.Outputs))
			}
			return res, nil
		}
		select {
		case <-woke:
		case <-tick.C:
			// Only on the tick: a job that ends within it (most do)
			// costs Temporal no heartbeat at all.
			activity.RecordHeartbeat(ctx, j.Status, j.Attempt)
		case <-ctx.Done():
			return contract.JobResult{}, ctx.Err()
		}
	}
}

func nonEmpty(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

// RetryJob queues a lost job for its next attempt (idempotent).
func (a *Activities) RetryJob(ctx context.Context, jobID string, lostAttempt int) error {
	_, err := a.Store.RetryJob(ctx, jobID, lostAttempt)
	return classify(err)
}

// CancelJob asks the job to stop: a queued job is cancelled, a running one's
// runner is told at once through its held heartbeat.
func (a *Activities) CancelJob(ctx context.Context, jobID, reason string) error {
	_, err := a.Store.RequestCancel(ctx, jobID, reason)
	return classify(err)
}

// manifest marshals a manifest value.
func manifest(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("marshal manifest: %w", err)
	}
	return b, nil
}
