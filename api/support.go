package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// maxBundleWait is how long a GET may wait for a bundle to be collected.
const maxBundleWait = 60

// supportBundleView shows a bundle; its archive is downloaded on its own.
func supportBundleView(b store.SupportBundle) wire.SupportBundle {
	v := wire.SupportBundle{ID: b.ID, InstallID: b.InstallID, WorkflowID: b.WorkflowID, JobID: b.JobID, Status: string(b.Status),
		Error: b.Error, Parts: nonNil(b.Parts), Unavailable: b.Unavailable, SizeBytes: b.SizeBytes, SHA256: b.SHA256,
		CreatedAt: b.CreatedAt, FinishedAt: b.FinishedAt, ExpiresAt: b.ExpiresAt}
	if b.Status == status.JobSucceeded {
		v.DownloadURL = "/v1/installs/" + b.InstallID + "/support-bundles/" + b.ID + "/download"
	}
	return v
}

// supportBundleArchive is the answer of a bundle's download.
const supportBundleArchive = rawBody("the bundle as a gzipped tar: every part below bundle/, redacted on the runner")

func bundleFinished(b store.SupportBundle) bool {
	return b.FinishedAt != nil
}

func (s *Server) createSupportBundle(c echo.Context) error {
	ctx, org := c.Request().Context(), orgID(c)
	inst, err := s.opsInstall(c)
	if err != nil {
		return err
	}
	id := store.NewID("sb")
	b, err := s.store.CreateSupportBundle(ctx, store.SupportBundle{ID: id, OrgID: org, InstallID: inst.ID,
		WorkflowID: contract.SupportBundleWorkflowID(inst.ID, id)})
	if err != nil {
		return err
	}
	noteObject(ctx, "support_bundle_id", b.ID)
	err = s.startRecorded(ctx, "support bundle", b.ID, func(ctx context.Context) error { return s.ops.StartSupportBundle(ctx, b) },
		func(ctx context.Context, _ error) error {
			now := s.now()
			b.Status, b.Error, b.FinishedAt = status.JobFailed, "the support bundle's workflow could not be started", &now
			return s.store.UpdateSupportBundle(ctx, b)
		})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, supportBundleView(b))
}

func (s *Server) listSupportBundles(c echo.Context) error {
	return listBelowInstall(s, c, s.store.ListSupportBundles, func(bs []store.SupportBundle) wire.SupportBundleList {
		return wire.SupportBundleList{SupportBundles: views(bs, supportBundleView)}
	})
}

func (s *Server) installBundle(c echo.Context) (store.SupportBundle, error) {
	return installChild(s, c, "bundle", "support bundle", s.store.GetSupportBundle,
		func(b store.SupportBundle) string { return b.InstallID })
}

func (s *Server) getSupportBundle(c echo.Context) error {
	wait, err := queryInt(c, "wait", 0, 0, maxBundleWait)
	if err != nil {
		return err
	}
	b, err := s.installBundle(c)
	if err != nil {
		return err
	}
	if wait > 0 && !bundleFinished(b) {
		if err := s.awaitClosed(c.Request().Context(), wait, "support bundle", b.WorkflowID); err != nil {
			return err
		}
		if b, err = s.store.GetSupportBundle(c.Request().Context(), b.OrgID, b.ID); err != nil {
			return err
		}
	}
	return c.JSON(http.StatusOK, supportBundleView(b))
}

func (s *Server) deleteSupportBundle(c echo.Context) error {
	b, err := s.installBundle(c)
	if err != nil {
		return err
	}
	if err := s.store.DeleteSupportBundle(c.Request().Context(), b.OrgID, b.InstallID, b.ID); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) downloadSupportBundle(c echo.Context) error {
	b, err := s.installBundle(c)
	if err != nil {
		return err
	}
	if b.Status != status.JobSucceeded {
		return apierr.New(http.StatusConflict, protocol.CodeConflict, "", "support bundle %s has no archive: it is %s", b.ID, b.Status)
	}
	b, data, err := s.store.SupportBundleData(c.Request().Context(), b.OrgID, b.ID)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="support-bundle-%s.tar.gz"`, b.ID))
	h.Set("Digest", "sha-256="+b.SHA256)
	return c.Blob(http.StatusOK, "application/gzip", data)
}

// Limits of a logs request.
const (
	defaultLogsSince = 3600
	maxLogsSince     = 7 * 24 * 3600
	maxLogsTail      = 100_000
	logsJobWait      = 30 * time.Second // how long the API waits for the request's job to be queued
)

var (
	namespaceName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
	workloadName  = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)
)

// validLogsRequest checks a logs request; a 400 names the field.
func validLogsRequest(r wire.CreateLogsRequest) error {
	switch {
	case r.Namespace == "":
		return apierr.Invalid("namespace", "is required: the namespace whose events and container logs to read")
	case !namespaceName.MatchString(r.Namespace):
		return apierr.Invalid("namespace", "%q is not a Kubernetes namespace name (lower-case letters, digits and '-', at most 63)", r.Namespace)
	case r.Workload != "" && !workloadName.MatchString(r.Workload):
		return apierr.Invalid("workload", "%q is not a Kubernetes object name", r.Workload)
	case r.SinceSeconds != nil && (*r.SinceSeconds < 1 || *r.SinceSeconds > maxLogsSince):
		return apierr.Invalid("since_seconds", "%d is out of range: 1 to %d (7 days)", *r.SinceSeconds, maxLogsSince)
	case r.TailLines != nil && (*r.TailLines < 1 || *r.TailLines > maxLogsTail):
		return apierr.Invalid("tail_lines", "%d is out of range: 1 to %d", *r.TailLines, maxLogsTail)
	}
	return nil
}

// createLogsRequest starts a logs request and answers with its job once queued, whose logs the caller
// follows (GET /v1/jobs/{id}/logs?follow=true).
func (s *Server) createLogsRequest(c echo.Context) error {
	ctx, org := c.Request().Context(), orgID(c)
	inst, req, err := pathRequest[wire.CreateLogsRequest](c, s.store.GetInstall)
	if err != nil {
		return err
	}
	if err := validLogsRequest(req); err != nil {
		return err
	}
	if err := s.checkReleaseNamespace(ctx, inst, req.Namespace); err != nil {
		return err
	}
	if s.ops == nil {
		return errNoOps()
	}
	kr := contract.KubeLogsRequest{InstallID: inst.ID, Namespace: req.Namespace, Workload: req.Workload, SinceSeconds: defaultLogsSince}
	if req.SinceSeconds != nil {
		kr.SinceSeconds = *req.SinceSeconds
	}
	if req.TailLines != nil {
		kr.TailLines = *req.TailLines
	}
	id := store.NewID("logs")
	wf := contract.KubeLogsWorkflowID(inst.ID, id)
	if err := s.ops.StartKubeLogs(ctx, wf, kr); err != nil {
		return opsFailed("starting the logs request", err)
	}
	job, err := s.queuedJob(ctx, org, contract.KubeLogsJobKey(wf))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, wire.LogsRequest{ID: id, InstallID: inst.ID, WorkflowID: wf, JobID: job.ID,
		LogsURL: "/v1/jobs/" + job.ID + "/logs?follow=true"})
}

// checkReleaseNamespace refuses a namespace none of the install's helm releases use (in the config
// version it runs): a logs request reads the install's own workloads, never the rest of the cluster.
func (s *Server) checkReleaseNamespace(ctx context.Context, inst store.Install, namespace string) error {
	if inst.ConfigVersion == 0 {
		return apierr.Invalid("namespace", "the install has run no config version yet, so it has no releases to read logs of")
	}
	ac, err := s.store.GetAppConfig(ctx, inst.OrgID, inst.AppID, inst.ConfigVersion)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(ac)
	if err != nil {
		return err
	}
	var used []string
	for _, name := range cfg.ComponentNames() {
		if c, _ := cfg.Component(name); c.Helm != nil && !slices.Contains(used, c.Helm.Namespace) {
			used = append(used, c.Helm.Namespace)
		}
	}
	if !slices.Contains(used, namespace) {
		return apierr.Invalid("namespace", "%q is not a namespace the install's releases use (%s)", namespace, strings.Join(used, ", "))
	}
	return nil
}

// queuedJob waits (up to logsJobWait) for the job a workflow just started queues under key.
func (s *Server) queuedJob(ctx context.Context, org, key string) (store.Job, error) {
	ctx, cancel := context.WithTimeout(ctx, logsJobWait)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		job, err := s.store.GetJobByKey(ctx, org, key)
		if !errors.Is(err, store.ErrNotFound) {
			return job, err
		}
		select {
		case <-ctx.Done():
			return store.Job{}, apierr.New(http.StatusServiceUnavailable, "unavailable", "",
				"the logs request's job was not queued within %s: is the worker running?", logsJobWait)
		case <-tick.C:
		}
	}
}
