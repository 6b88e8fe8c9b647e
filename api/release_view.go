package api

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// releaseView is a release as the API shows it: its installs by batch.
type releaseView struct {
	ID                  string          `json:"id"`
	AppID               string          `json:"app_id"`
	ConfigVersion       int             `json:"config_version"`
	RollbackOf          string          `json:"rollback_of,omitempty"`
	Installs            json.RawMessage `json:"installs"`
	BatchSize           int             `json:"batch_size"`
	PauseBetweenBatches string          `json:"pause_between_batches"`
	FailureThreshold    int             `json:"failure_threshold"`
	WorkflowID          string          `json:"workflow_id"`
	Status              string          `json:"status"`
	Paused              bool            `json:"paused"`
	Error               string          `json:"error,omitempty"`
	Batches             []batchView     `json:"batches"`
	CreatedAt           time.Time       `json:"created_at"`
	FinishedAt          *time.Time      `json:"finished_at"`
}

type batchView struct {
	Batch    int                    `json:"batch"`
	Installs []store.ReleaseInstall `json:"installs"`
	// Progress lines, e.g. "cust-1: waiting for the maintenance window until …".
	Progress []string `json:"progress"`
}

func newReleaseView(r store.Release) releaseView {
	v := releaseView{ID: r.ID, AppID: r.AppID, ConfigVersion: r.ConfigVersion, RollbackOf: r.RollbackOf,
		Installs: json.RawMessage(r.Selector), BatchSize: r.BatchSize, FailureThreshold: r.FailureThreshold,
		PauseBetweenBatches: (time.Duration(r.PauseMS) * time.Millisecond).String(), WorkflowID: r.WorkflowID,
		Status: string(r.Status), Paused: r.Paused, Error: r.Error, Batches: []batchView{}, CreatedAt: r.CreatedAt, FinishedAt: r.FinishedAt}
	if r.Selector == "" {
		v.Installs = json.RawMessage("{}")
	}
	for _, ri := range r.Installs {
		for len(v.Batches) <= ri.Batch {
			v.Batches = append(v.Batches, batchView{Batch: len(v.Batches), Installs: []store.ReleaseInstall{}, Progress: []string{}})
		}
		b := &v.Batches[ri.Batch]
		b.Installs = append(b.Installs, ri)
		b.Progress = append(b.Progress, ri.InstallName+": "+progress(ri))
	}
	return v
}

// progress says where an install is in its release.
func progress(ri store.ReleaseInstall) string {
	switch {
	case ri.Status == status.ReleaseInstallWaiting && ri.WaitingUntil != nil:
		return "waiting for the maintenance window until " + ri.WaitingUntil.UTC().Format(time.RFC3339)
	case ri.Status == status.ReleaseInstallRunning:
		return fmt.Sprintf("deploying config version %d (operation %s)", ri.ToVersion, ri.OperationID)
	case ri.Status == status.ReleaseInstallFailed:
		return "failed: " + ri.Error
	case ri.Status == status.ReleaseInstallSucceeded:
		return fmt.Sprintf("runs config version %d", ri.ToVersion)
	}
	return string(ri.Status)
}

// releaseSchemas are the OpenAPI schemas of releases.
func releaseSchemas() map[string]any {
	ri := object(props{"install_id": str, "install_name": str, "batch": integer,
		"from_version": described(integer, "the config version the install ran before the release deployed it (a rollback brings it back to it)"),
		"to_version":   described(integer, "the config version the release brings it to"),
		"operation_id": described(str, "its deploy_config operation (the last, when a resume deployed it again)"),
		"status":       map[string]any{"type": "string", "enum": []status.ReleaseInstall{status.ReleaseInstallPending, status.ReleaseInstallWaiting, status.ReleaseInstallRunning, status.ReleaseInstallSucceeded, status.ReleaseInstallFailed, status.ReleaseInstallSkipped}},
		"error":        str, "waiting_until": dateTime, "updated_at": dateTime},
		"install_id", "install_name", "batch", "from_version", "to_version", "status", "updated_at")
	return map[string]any{
		"ReleaseInstall": ri,
		"ReleaseBatch": object(props{"batch": integer, "installs": arrayOf(ref("ReleaseInstall")),
			"progress": described(arrayOf(str), "one line per install, e.g. \"cust-1: waiting for the maintenance window until …\"")},
			"batch", "installs", "progress"),
		"Release": object(props{"id": str, "app_id": str,
			"config_version": described(integer, "the version deployed (0 for a rollback: each install's to_version)"),
			"rollback_of":    described(str, "the release this one rolls back"),
			"installs":       described(anyMap, "the installs asked for, as asked"),
			"batch_size":     integer, "pause_between_batches": str, "failure_threshold": integer, "workflow_id": str,
			"status":  map[string]any{"type": "string", "enum": []status.Release{status.ReleaseRunning, status.ReleasePaused, status.ReleaseHalted, status.ReleaseSucceeded, status.ReleaseCancelled}},
			"paused":  described(boolean, "a pause was asked: the release stops before its next batch"),
			"error":   described(str, "why a halted release halted: the install that failed and why"),
			"batches": arrayOf(ref("ReleaseBatch")), "created_at": dateTime, "finished_at": nullable(dateTime)},
			"id", "app_id", "config_version", "installs", "batch_size", "pause_between_batches", "failure_threshold",
			"workflow_id", "status", "paused", "batches", "created_at", "finished_at"),
		"ReleaseList": listOf("releases", "Release"),
		"ReleaseTargets": request(props{"all": boolean, "ids": arrayOf(str), "names": arrayOf(str),
			"selector": described(map[string]any{}, "a Kubernetes label selector (\"env=prod,tier!=free\") or a map of labels that must all match")}),
		"CreateReleaseRequest": request(props{
			"config_version":        described(integer, "the app config version to deploy; left out: the latest"),
			"installs":              ref("ReleaseTargets"),
			"batch_size":            described(integer, "installs per batch (default 1)"),
			"batch_percent":         described(integer, "installs per batch as a percentage of those selected, rounded up (instead of batch_size)"),
			"pause_between_batches": described(str, "a Go duration, e.g. 30s"),
			"failure_threshold":     described(integer, "failed installs that halt the release (default 1)")}, "installs"),
	}
}
