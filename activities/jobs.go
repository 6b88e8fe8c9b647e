package activities

import (
	"context"
	"encoding/json"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/notify"
)

// jobsStore is what the job activities read and write of the store.
type jobsStore interface {
	Bus() notify.Bus
	GetJobOutcome(ctx context.Context, jobID string) (store.Job, error)
	RetryJob(ctx context.Context, jobID string, lostAttempt int) (store.Job, error)
	RequestCancel(ctx context.Context, jobID, reason string) (store.Job, error)
}

// Jobs are the activities of RunJob, the one way a workflow reaches a
// runner: enqueue, await, retry a lost attempt, cancel.
type Jobs struct {
	store      jobsStore
	queue      *jobQueue
	awaitCheck time.Duration
}

// NewJobs is the job activities alone, over a store (for benchmarks that
// drive jobs without a workflow).
func NewJobs(s *store.Store, awaitCheck time.Duration) *Jobs {
	return &Jobs{store: s, queue: &jobQueue{store: s}, awaitCheck: awaitCheck}
}

// EnqueueJob queues a job on an install's runner; idempotent by Key.
func (a *Jobs) EnqueueJob(ctx context.Context, in contract.EnqueueJobInput) (contract.JobRef, error) {
	return a.queue.enqueue(ctx, in)
}

// AwaitJob waits until the job's current attempt ends, heartbeating Temporal
// every awaitCheck meanwhile (the heartbeat timeout is longer). It is woken
// by the store's bus; it re-reads the row only when woken or every
// awaitCheck. A worker that dies mid-await is replaced by the activity's
// retry on another worker, which awaits the same job: nothing is enqueued
// twice.
//
// Outputs are returned only when withOutputs is set: they land in Temporal
// history, so jobs whose outputs may be large or secret (terraform plans and
// outputs) leave them in the store and callers read them there.
func (a *Jobs) AwaitJob(ctx context.Context, jobID string, withOutputs bool) (contract.JobResult, error) {
	woke, unsub := a.store.Bus().Subscribe(notify.JobTopic(jobID))
	defer unsub()
	// Heartbeats only on the tick: a job that ends within it (most do) costs
	// Temporal no heartbeat at all.
	j, err := awaitEnd(ctx, woke, a.awaitCheck, func(ctx context.Context) (store.Job, bool, error) {
		j, err := a.store.GetJobOutcome(ctx, jobID)
		return j, err == nil && status.JobTerminal(j.Status), err
	}, nil, func(j store.Job) { activity.RecordHeartbeat(ctx, j.Status, j.Attempt) })
	if err != nil {
		return contract.JobResult{}, err
	}
	res := contract.JobResult{JobID: j.ID, Status: j.Status, Attempt: j.Attempt, ExitCode: j.ExitCode, Error: j.Error}
	if withOutputs {
		res.Outputs = json.RawMessage(nonEmpty(j.Outputs))
	}
	return res, nil
}

func nonEmpty(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

// RetryJob queues a lost job for its next attempt (idempotent).
func (a *Jobs) RetryJob(ctx context.Context, jobID string, lostAttempt int) error {
	_, err := a.store.RetryJob(ctx, jobID, lostAttempt)
	return err
}

// CancelJob asks the job to stop: a queued job is cancelled, a running one's
// runner is told at once through its held heartbeat.
func (a *Jobs) CancelJob(ctx context.Context, jobID, reason string) error {
	_, err := a.store.RequestCancel(ctx, jobID, reason)
	return err
}

// queueStore is what queueing a rendered job reads and writes.
type queueStore interface {
	GetInstallByID(ctx context.Context, id string) (store.Install, error)
	GetInstallRunner(ctx context.Context, orgID, installID string) (store.Runner, error)
	EnqueueJob(ctx context.Context, spec store.JobSpec) (store.Job, bool, error)
}

// jobQueue queues a job, its manifest rendered, on an install's runner.
type jobQueue struct {
	store queueStore
}

// enqueue queues the job; idempotent by its Key.
func (q *jobQueue) enqueue(ctx context.Context, in contract.EnqueueJobInput) (contract.JobRef, error) {
	inst, err := q.store.GetInstallByID(ctx, in.InstallID)
	if err != nil {
		return contract.JobRef{}, err
	}
	r, err := q.store.GetInstallRunner(ctx, inst.OrgID, inst.ID)
	if err != nil {
		return contract.JobRef{}, err
	}
	j, created, err := q.store.EnqueueJob(ctx, store.JobSpec{Key: in.Key, OrgID: inst.OrgID, RunnerID: r.ID,
		InstallID: &inst.ID, Type: in.Type, Manifest: in.Manifest, TimeoutMS: in.TimeoutMS})
	if err != nil {
		return contract.JobRef{}, err
	}
	return contract.JobRef{JobID: j.ID, Created: created}, nil
}

// enqueueManifest marshals m and queues it as a job of type typ.
func (q *jobQueue) enqueueManifest(ctx context.Context, key, installID, typ string, m any, timeout time.Duration) (contract.JobRef, error) {
	raw, err := manifest(m)
	if err != nil {
		return contract.JobRef{}, err
	}
	return q.enqueue(ctx, contract.EnqueueJobInput{Key: key, InstallID: installID, Type: typ, Manifest: raw,
		TimeoutMS: timeout.Milliseconds()})
}
