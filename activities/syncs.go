package activities

import (
	"context"

	"go.temporal.io/sdk/temporal"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// syncStore is what the sync activities read of the store beyond the
// helpers'.
type syncStore interface {
	GetOperationByID(ctx context.Context, opID string) (store.InstallOperation, error)
	GetBuildByID(ctx context.Context, buildID string) (store.Build, error)
}

// Syncs are the activities that copy a step's build into the install's own
// registry (an install deploys only from there), and an image's deploy and
// teardown, which that copy is.
type Syncs struct {
	store     syncStore
	steps     *stepJobs
	installed *installed
	artifacts *artifacts
}

// EnqueueSyncJob queues, on the install's runner, the copy of a build's
// artifact by digest from the vendor's registry (a credential that may pull
// the app's repository only) into the install's own registry.
func (a *Syncs) EnqueueSyncJob(ctx context.Context, in contract.SyncJobInput) (contract.JobRef, error) {
	op, err := a.store.GetOperationByID(ctx, in.OperationID)
	if err != nil {
		return contract.JobRef{}, err
	}
	src, dst, err := a.artifacts.syncEnds(ctx, op.InstallID, in.BuildID, true)
	if err != nil {
		return contract.JobRef{}, err
	}
	m := protocol.OCIManifest{Operation: protocol.OCISync, Artifact: &src, Destination: dst}
	spec := store.JobSpec{Key: in.Key, Type: protocol.JobTypeOCI, TimeoutMS: buildJobTimeout.Milliseconds()}
	return a.steps.enqueue(ctx, op, in.Step, spec, m, func(jobID string) store.StepChange {
		return store.StepChange{SyncJobID: &jobID, Status: new(status.StepSyncing)}
	})
}

// RecordSync checks a sync job's result: the install's registry must hold
// exactly the build's digest. (For a container image the sync is the
// deploy: RecordImage records it once the step's dependencies are done.)
func (a *Syncs) RecordSync(ctx context.Context, opID, step, buildID, jobID string) (contract.SyncSummary, error) {
	var art protocol.Artifact
	failed, err := a.steps.outputs(ctx, opID, step, jobID, &art)
	if err != nil || failed != "" {
		return contract.SyncSummary{Failed: failed != "", Error: failed}, err
	}
	failed, err = a.installed.checkDigest(ctx, opID, step, buildID, art.Digest)
	return contract.SyncSummary{Failed: failed != "", Error: failed}, err
}

// RecordImage records that an install's container_image component runs
// the step's build — the sync was its deploy — once its dependencies are
// done.
func (a *Syncs) RecordImage(ctx context.Context, opID, step string) error {
	op, st, err := a.steps.stepOf(ctx, opID, step)
	if err != nil {
		return err
	}
	if st.BuildID == nil {
		return temporal.NewNonRetryableApplicationError("step "+step+" has no build", "NoBuild", nil)
	}
	b, err := a.store.GetBuildByID(ctx, *st.BuildID)
	if err != nil {
		return err
	}
	return a.installed.recordImage(ctx, op, step, b)
}

// ForgetComponent forgets what an install's component ran (its outputs and
// its build) once it is torn down; for a container_image, that is the
// whole teardown (the install's registry goes with the sandbox).
func (a *Syncs) ForgetComponent(ctx context.Context, opID, step string) error {
	return a.installed.forget(ctx, opID, step)
}
