package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// createRelease checks the request, records the release and starts its
// workflow app/<app>/release/<release>.
func (s *Server) createRelease(c echo.Context) error {
	ctx, org := c.Request().Context(), orgID(c)
	if s.ops == nil {
		return errNoOps()
	}
	app, req, err := pathRequest[wire.CreateReleaseRequest](c, s.store.GetApp)
	if err != nil {
		return err
	}
	version, cfg, err := s.appVersion(ctx, org, app.ID, req.ConfigVersion)
	if err != nil {
		return err
	}
	all, err := s.store.ListInstalls(ctx, org, app.ID)
	if err != nil {
		return err
	}
	targets, err := pickTargets(req.Installs, all)
	if err != nil {
		return err
	}
	r := store.Release{OrgID: org, AppID: app.ID, ConfigVersion: version, Selector: string(mustJSON(req.Installs))}
	if err := applyPacing(req.ReleasePacing, &r, len(targets)); err != nil {
		return err
	}
	for i, inst := range targets {
		if err := takesInputs(cfg, version, inst); err != nil {
			return unprocessable("config_version", "install %s: %s", inst.Name, apierrMessage(err))
		}
		r.Installs = append(r.Installs, store.ReleaseInstall{InstallID: inst.ID, InstallName: inst.Name, Batch: i / r.BatchSize, ToVersion: version})
	}
	return s.launchRelease(c, r)
}

// launchRelease records a release and starts its workflow; a release of the
// app that has not ended is a 409.
func (s *Server) launchRelease(c echo.Context, r store.Release) error {
	ctx := c.Request().Context()
	r, err := s.store.CreateRelease(ctx, r)
	if err != nil {
		return err
	}
	noteObject(ctx, "release_id", r.ID) // new_release_id for a rollback
	if err := s.ops.StartRelease(ctx, r); err != nil {
		_ = s.store.SetReleaseStatus(context.WithoutCancel(ctx), r.ID, status.ReleaseCancelled, "its workflow could not be started")
		return opsFailed("starting the release", err)
	}
	return c.JSON(http.StatusAccepted, releaseView(r))
}

// rollbackRelease starts a release that brings every install the release
// deployed back to the config version it ran before, in the same batches.
func (s *Server) rollbackRelease(c echo.Context) error {
	if s.ops == nil {
		return errNoOps()
	}
	old, err := s.appRelease(c)
	if err != nil {
		return err
	}
	r := store.Release{OrgID: old.OrgID, AppID: old.AppID, RollbackOf: old.ID, Selector: old.Selector,
		BatchSize: old.BatchSize, PauseMS: old.PauseMS, FailureThreshold: old.FailureThreshold, SoakMS: old.SoakMS}
	if r.SoakMS > 0 {
		r.OnUnhealthy = contract.OnUnhealthyHalt // rolling a rollback back would bring the release's version again
	}
	for _, ri := range old.Installs {
		if ri.OperationID != "" && ri.FromVersion > 0 && ri.Status != status.ReleaseInstallRolledBack {
			r.Installs = append(r.Installs, store.ReleaseInstall{InstallID: ri.InstallID, InstallName: ri.InstallName,
				Batch: ri.Batch, ToVersion: ri.FromVersion})
		}
	}
	if len(r.Installs) == 0 {
		return unprocessable("", "release %s deployed no install that ran a config version before (and that its health gate did not roll back already): nothing to roll back", old.ID)
	}
	compactBatches(r.Installs)
	return s.launchRelease(c, r)
}

// compactBatches numbers the batches of installs 0, 1, … in order, keeping
// those that had none out.
func compactBatches(ris []store.ReleaseInstall) {
	var seen []int
	for _, ri := range ris {
		if !slices.Contains(seen, ri.Batch) {
			seen = append(seen, ri.Batch)
		}
	}
	slices.Sort(seen)
	for i := range ris {
		ris[i].Batch = slices.Index(seen, ris[i].Batch)
	}
}

func (s *Server) listReleases(c echo.Context) error {
	ctx, org := c.Request().Context(), orgID(c)
	app, err := s.store.GetApp(ctx, org, c.Param("id"))
	if err != nil {
		return err
	}
	rs, err := s.store.ListReleases(ctx, org, app.ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.ReleaseList{Releases: views(rs, releaseView)})
}

func (s *Server) getRelease(c echo.Context) error {
	r, err := s.appRelease(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, releaseView(r))
}

// appRelease reads the release the path names, if it is the path's app's.
func (s *Server) appRelease(c echo.Context) (store.Release, error) {
	r, err := s.store.GetRelease(c.Request().Context(), orgID(c), c.Param("rid"))
	if err != nil {
		return r, err
	}
	if r.AppID != c.Param("id") {
		return r, apierr.New(http.StatusNotFound, protocol.CodeNotFound, "", "app %s has no release %s", c.Param("id"), r.ID)
	}
	return r, nil
}

func (s *Server) pauseRelease(c echo.Context) error {
	return s.controlRelease(c, contract.ReleasePause)
}
func (s *Server) resumeRelease(c echo.Context) error {
	return s.controlRelease(c, contract.ReleaseResume)
}
func (s *Server) cancelRelease(c echo.Context) error {
	return s.controlRelease(c, contract.ReleaseCancel)
}

// controlRelease signals a release that has not ended (else 409).
func (s *Server) controlRelease(c echo.Context, action string) error {
	if s.ops == nil {
		return errNoOps()
	}
	r, err := s.appRelease(c)
	if err != nil {
		return err
	}
	if r.FinishedAt != nil {
		return apierr.New(http.StatusConflict, protocol.CodeConflict, "", "release %s has ended (%s)", r.ID, r.Status)
	}
	ctx := c.Request().Context()
	if action == contract.ReleasePause || action == contract.ReleaseResume {
		if err := s.store.SetReleasePaused(ctx, r.ID, action == contract.ReleasePause); err != nil {
			return err
		}
		r.Paused = action == contract.ReleasePause
	}
	err = s.ops.SignalRelease(ctx, r.WorkflowID, action)
	if errors.Is(err, store.ErrNotFound) && action == contract.ReleaseCancel {
		// its workflow ended without recording it (it failed): the cancel records it
		r.Status, r.Error = status.ReleaseCancelled, "cancelled after its workflow had ended"
		if err := s.store.SetReleaseStatus(ctx, r.ID, r.Status, r.Error); err != nil {
			return err
		}
		return c.JSON(http.StatusAccepted, releaseView(r))
	}
	if err != nil {
		return opsFailed(action+" release", err)
	}
	if action == contract.ReleaseResume && r.Status != status.ReleaseRunning {
		// resuming now: a follower must not read the halt it resumes from
		r.Status, r.Error = status.ReleaseRunning, ""
		if err := s.store.SetReleaseStatus(ctx, r.ID, r.Status, ""); err != nil {
			return err
		}
	}
	return c.JSON(http.StatusAccepted, releaseView(r))
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// apierrMessage is an API error's message (without its field).
func apierrMessage(err error) string {
	if he, ok := err.(*apierr.HTTPError); ok {
		return he.Body.Message
	}
	return err.Error()
}
