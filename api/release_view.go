package api

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// releaseView shows a release: its installs by batch, each with a line of
// progress.
func releaseView(r store.Release) wire.Release {
	v := wire.Release{ID: r.ID, AppID: r.AppID, ConfigVersion: r.ConfigVersion, RollbackOf: r.RollbackOf,
		Installs: map[string]any{}, BatchSize: r.BatchSize, FailureThreshold: r.FailureThreshold,
		PauseBetweenBatches: (time.Duration(r.PauseMS) * time.Millisecond).String(),
		Soak:                (time.Duration(r.SoakMS) * time.Millisecond).String(), OnUnhealthy: r.OnUnhealthy, WorkflowID: r.WorkflowID,
		Status: string(r.Status), Paused: r.Paused, Error: r.Error, Batches: []wire.ReleaseBatch{}, CreatedAt: r.CreatedAt, FinishedAt: r.FinishedAt}
	if r.Selector != "" {
		_ = json.Unmarshal([]byte(r.Selector), &v.Installs) // stored as the request's installs: an object
	}
	for _, ri := range r.Installs {
		for len(v.Batches) <= ri.Batch {
			v.Batches = append(v.Batches, wire.ReleaseBatch{Batch: len(v.Batches), Installs: []wire.ReleaseInstall{}, Progress: []string{}})
		}
		b := &v.Batches[ri.Batch]
		b.Installs = append(b.Installs, releaseInstallView(ri))
		b.Progress = append(b.Progress, ri.InstallName+": "+progress(ri))
	}
	return v
}

func releaseInstallView(ri store.ReleaseInstall) wire.ReleaseInstall {
	return wire.ReleaseInstall{InstallID: ri.InstallID, InstallName: ri.InstallName, Batch: ri.Batch, FromVersion: ri.FromVersion,
		ToVersion: ri.ToVersion, OperationID: ri.OperationID, RollbackOperationID: ri.RollbackOperationID, Status: string(ri.Status), Error: ri.Error, WaitingUntil: ri.WaitingUntil,
		UpdatedAt: ri.UpdatedAt}
}

// progress says where an install is in its release.
func progress(ri store.ReleaseInstall) string {
	switch {
	case ri.Status == status.ReleaseInstallWaiting && ri.WaitingUntil != nil:
		return "waiting for the maintenance window until " + ri.WaitingUntil.UTC().Format(time.RFC3339)
	case ri.Status == status.ReleaseInstallRolledBack:
		return fmt.Sprintf("rolled back to config version %d (operation %s): %s", ri.FromVersion, ri.RollbackOperationID, ri.Error)
	case ri.RollbackOperationID != "" && ri.Status != status.ReleaseInstallFailed:
		return fmt.Sprintf("rolling back to config version %d (operation %s)", ri.FromVersion, ri.RollbackOperationID)
	case ri.Status == status.ReleaseInstallUnhealthy:
		return "unhealthy: " + ri.Error
	case ri.Status == status.ReleaseInstallRunning:
		return fmt.Sprintf("deploying config version %d (operation %s)", ri.ToVersion, ri.OperationID)
	case ri.Status == status.ReleaseInstallFailed:
		return "failed: " + ri.Error
	case ri.Status == status.ReleaseInstallSucceeded:
		return fmt.Sprintf("runs config version %d", ri.ToVersion)
	}
	return string(ri.Status)
}
