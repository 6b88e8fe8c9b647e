package activities

import (
	"context"
	"fmt"
	"time"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/store"
)

// runnerUpdateJobTimeout bounds the staging job (a download).
const runnerUpdateJobTimeout = 15 * time.Minute

// runnerRelease reads an update and the version it goes to.
func (a *Activities) runnerRelease(ctx context.Context, updateID string) (store.RunnerUpdate, store.RunnerVersion, error) {
	u, err := a.Store.GetRunnerUpdateByID(ctx, updateID)
	if err != nil {
		return u, store.RunnerVersion{}, err
	}
	v, err := a.Store.GetRunnerVersion(ctx, u.Version)
	return u, v, err
}

// EnqueueRunnerSyncJob queues, on the install's runner, the copy of the
// runner binary by digest from the vendor's registry into the install's own
// registry: the runner updates from there, as an install deploys builds.
func (a *Activities) EnqueueRunnerSyncJob(ctx context.Context, updateID, key string) (_ contract.JobRef, err error) {
	defer classified(&err)
	u, v, err := a.runnerRelease(ctx, updateID)
	if err != nil {
		return contract.JobRef{}, err
	}
	dst, err := a.installRegistry(ctx, u.InstallID)
	if err != nil {
		return contract.JobRef{}, err
	}
	src, err := a.vendorAccess(ctx, u.OrgID, "install/"+u.InstallID, registry.Scope{Repository: v.Repository, Actions: []string{"pull"}})
	if err != nil {
		return contract.JobRef{}, err
	}
	m, err := manifest(protocol.OCIManifest{Operation: protocol.OCISync,
		Artifact:    &protocol.ArtifactRef{Registry: src, Repository: v.Repository, Digest: v.Digest},
		Destination: protocol.OCIDestination{Registry: dst, Repository: installRepositoryPrefix + "runner", Tag: v.Version}})
	if err != nil {
		return contract.JobRef{}, err
	}
	return a.EnqueueJob(ctx, contract.EnqueueJobInput{Key: key, InstallID: u.InstallID, Type: protocol.JobTypeOCI,
		Manifest: m, TimeoutMS: runnerUpdateJobTimeout.Milliseconds()})
}

// EnqueueRunnerUpdateJob queues the job that stages the binary, from the
// install's registry, next to the runner.
func (a *Activities) EnqueueRunnerUpdateJob(ctx context.Context, updateID, key string, deadline, drain time.Duration) (_ contract.JobRef, err error) {
	defer classified(&err)
	u, v, err := a.runnerRelease(ctx, updateID)
	if err != nil {
		return contract.JobRef{}, err
	}
	src, err := a.installRegistry(ctx, u.InstallID)
	if err != nil {
		return contract.JobRef{}, err
	}
	m, err := manifest(protocol.RunnerUpdateManifest{UpdateID: u.ID, Version: v.Version,
		Binary:       protocol.ArtifactRef{Registry: src, Repository: installRepositoryPrefix + "runner", Digest: v.Digest},
		BinaryDigest: v.BinaryDigest, HealthDeadlineMS: deadline.Milliseconds(), DrainTimeoutMS: drain.Milliseconds()})
	if err != nil {
		return contract.JobRef{}, err
	}
	return a.EnqueueJob(ctx, contract.EnqueueJobInput{Key: key, InstallID: u.InstallID, Type: protocol.JobTypeRunnerUpdate,
		Manifest: m, TimeoutMS: runnerUpdateJobTimeout.Milliseconds()})
}

// EnqueueRunnerHealthJob queues the noop job a new runner must run to be
// healthy.
func (a *Activities) EnqueueRunnerHealthJob(ctx context.Context, updateID, key string) (_ contract.JobRef, err error) {
	defer classified(&err)
	u, err := a.Store.GetRunnerUpdateByID(ctx, updateID)
	if err != nil {
		return contract.JobRef{}, err
	}
	m, err := manifest(protocol.NoopManifest{Lines: []string{"health check of runner " + u.Version + " (update " + u.ID + ")"}})
	if err != nil {
		return contract.JobRef{}, err
	}
	return a.EnqueueJob(ctx, contract.EnqueueJobInput{Key: key, InstallID: u.InstallID, Type: protocol.JobTypeNoop,
		Manifest: m, TimeoutMS: time.Minute.Milliseconds()})
}

// FinishRunnerUpdate records the update's outcome: it succeeded when the
// health job succeeded on a runner of the new version. A failure's reason
// is the runner's own report of its rollback when there is one.
func (a *Activities) FinishRunnerUpdate(ctx context.Context, updateID string, end contract.RunnerUpdateEnd) (_ string, err error) {
	defer classified(&err)
	u, err := a.Store.GetRunnerUpdateByID(ctx, updateID)
	if err != nil {
		return "", err
	}
	reason := end.Failure
	if reason == "" {
		ran, err := a.Store.AttemptRunnerVersion(ctx, end.Health.JobID, end.Health.Attempt)
		switch {
		case err != nil:
			return "", err
		case end.Health.Status == status.JobSucceeded && ran == u.Version:
			st, err := a.Store.SucceedRunnerUpdate(ctx, u.ID) // failed if the runner rolled back after the health job
			return string(st), err
		case end.Health.Status == status.JobSucceeded:
			reason = fmt.Sprintf("the health job ran on runner version %q, not %s", ran, u.Version)
		default:
			reason = fmt.Sprintf("the health job %s: %s", end.Health.Status, end.Health.Error)
		}
	}
	if u.RunnerReason != "" {
		reason = u.RunnerReason
	}
	return string(status.RunnerUpdateFailed), a.Store.FinishRunnerUpdate(ctx, u.ID, status.RunnerUpdateFailed, reason)
}
