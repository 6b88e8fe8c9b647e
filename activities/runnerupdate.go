package activities

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/store"
)

// runnerUpdateStore is what the runner update activities read and write of
// the store.
type runnerUpdateStore interface {
	GetRunnerUpdateByID(ctx context.Context, id string) (store.RunnerUpdate, error)
	GetRunnerVersion(ctx context.Context, version string) (store.RunnerVersion, error)
	AttemptRunnerVersion(ctx context.Context, jobID string, attempt int) (string, error)
	SucceedRunnerUpdate(ctx context.Context, id string) (status.RunnerUpdate, error)
	FinishRunnerUpdate(ctx context.Context, id string, st status.RunnerUpdate, reason string) error
}

// RunnerUpdates are the activities that move an install's runner to a new
// version: copy it into the install's registry, stage it, check the new
// runner's health, record the outcome.
type RunnerUpdates struct {
	store     runnerUpdateStore
	render    *renderer
	artifacts *artifacts
	queue     *jobQueue
}

// runnerUpdateJobTimeout bounds the staging job (a download).
const runnerUpdateJobTimeout = 15 * time.Minute

// runnerRelease reads an update, the version it goes to and the install's
// own registry.
func (a *RunnerUpdates) runnerRelease(ctx context.Context, updateID string) (store.RunnerUpdate, store.RunnerVersion, protocol.RegistryAccess, error) {
	u, err := a.store.GetRunnerUpdateByID(ctx, updateID)
	if err != nil {
		return u, store.RunnerVersion{}, protocol.RegistryAccess{}, err
	}
	v, err := a.store.GetRunnerVersion(ctx, u.Version)
	if err != nil {
		return u, v, protocol.RegistryAccess{}, err
	}
	reg, err := a.render.installRegistry(ctx, u.InstallID)
	return u, v, reg, err
}

// EnqueueRunnerSyncJob queues, on the install's runner, the copy of the
// runner binary by digest from the vendor's registry into the install's own
// registry: the runner updates from there, as an install deploys builds.
func (a *RunnerUpdates) EnqueueRunnerSyncJob(ctx context.Context, updateID, key string) (contract.JobRef, error) {
	u, v, dst, err := a.runnerRelease(ctx, updateID)
	if err != nil {
		return contract.JobRef{}, err
	}
	src, err := a.artifacts.vendorAccess(ctx, u.OrgID, "install/"+u.InstallID, registry.Scope{Repository: v.Repository, Actions: []string{"pull"}})
	if err != nil {
		return contract.JobRef{}, err
	}
	m := protocol.OCIManifest{Operation: protocol.OCISync,
		Artifact:    &protocol.ArtifactRef{Registry: src, Repository: v.Repository, Digest: v.Digest},
		Destination: protocol.OCIDestination{Registry: dst, Repository: installRepositoryPrefix + "runner", Tag: v.Version}}
	return a.queue.enqueueManifest(ctx, key, u.InstallID, protocol.JobTypeOCI, m, runnerUpdateJobTimeout)
}

// EnqueueRunnerUpdateJob queues the job that stages the binary, from the
// install's registry, next to the runner.
func (a *RunnerUpdates) EnqueueRunnerUpdateJob(ctx context.Context, updateID, key string, deadline, drain time.Duration) (contract.JobRef, error) {
	u, v, src, err := a.runnerRelease(ctx, updateID)
	if err != nil {
		return contract.JobRef{}, err
	}
	m := protocol.RunnerUpdateManifest{UpdateID: u.ID, Version: v.Version,
		Binary:       protocol.ArtifactRef{Registry: src, Repository: installRepositoryPrefix + "runner", Digest: v.Digest},
		BinaryDigest: v.BinaryDigest, HealthDeadlineMS: deadline.Milliseconds(), DrainTimeoutMS: drain.Milliseconds()}
	return a.queue.enqueueManifest(ctx, key, u.InstallID, protocol.JobTypeRunnerUpdate, m, runnerUpdateJobTimeout)
}

// EnqueueRunnerHealthJob queues the noop job a new runner must run to be
// healthy.
func (a *RunnerUpdates) EnqueueRunnerHealthJob(ctx context.Context, updateID, key string) (contract.JobRef, error) {
	u, err := a.store.GetRunnerUpdateByID(ctx, updateID)
	if err != nil {
		return contract.JobRef{}, err
	}
	m := protocol.NoopManifest{Lines: []string{"health check of runner " + u.Version + " (update " + u.ID + ")"}}
	return a.queue.enqueueManifest(ctx, key, u.InstallID, protocol.JobTypeNoop, m, time.Minute)
}

// FinishRunnerUpdate records the update's outcome: it succeeded when the
// health job succeeded on a runner of the new version. A failure's reason
// is the runner's own report of its rollback when there is one.
func (a *RunnerUpdates) FinishRunnerUpdate(ctx context.Context, updateID string, end contract.RunnerUpdateEnd) (string, error) {
	u, err := a.store.GetRunnerUpdateByID(ctx, updateID)
	if err != nil {
		return "", err
	}
	reason := end.Failure
	if reason == "" {
		ran, err := a.store.AttemptRunnerVersion(ctx, end.Health.JobID, end.Health.Attempt)
		switch {
		case err != nil:
			return "", err
		case end.Health.Status == status.JobSucceeded && ran == u.Version:
			st, err := a.store.SucceedRunnerUpdate(ctx, u.ID) // failed if the runner rolled back after the health job
			return string(st), err
		case end.Health.Status == status.JobSucceeded:
			reason = fmt.Sprintf("the health job ran on runner version %q, not %s", ran, u.Version)
		default:
			reason = fmt.Sprintf("the health job %s: %s", end.Health.Status, end.Health.Error)
		}
	}
	if held, ok := strings.CutPrefix(u.RunnerReason, protocol.UpdateHeld+": "); ok {
		// The runner holds the verified release until its customer accepts it.
		return string(status.RunnerUpdateAvailable), a.store.FinishRunnerUpdate(ctx, u.ID, status.RunnerUpdateAvailable, held)
	}
	if u.RunnerReason != "" {
		reason = u.RunnerReason
	}
	return string(status.RunnerUpdateFailed), a.store.FinishRunnerUpdate(ctx, u.ID, status.RunnerUpdateFailed, reason)
}
