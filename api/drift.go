package api

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// minDriftEvery is the shortest drift schedule.
const minDriftEvery = time.Second

// putDriftSchedule creates, changes or (every "" or "0") deletes the
// install's drift schedule, a Temporal schedule of drift checks.
func (s *Server) putDriftSchedule(c echo.Context) error {
	var req wire.DriftScheduleRequest
	if err := apierr.Bind(c, &req); err != nil {
		return err
	}
	every, err := driftEvery(req.Every)
	if err != nil {
		return err
	}
	ctx, org := c.Request().Context(), orgID(c)
	inst, err := s.opsInstall(c)
	if err != nil {
		return err
	}
	if every == 0 {
		req.Every = ""
	}
	if err := s.store.SetDriftSettings(ctx, org, inst.ID, req.Every, req.Reconcile); err != nil {
		return err
	}
	if err := s.ops.SetDriftSchedule(ctx, inst.ID, every); err != nil {
		return opsFailed("setting the drift schedule", err)
	}
	return c.JSON(http.StatusOK, wire.DriftSchedule{Every: req.Every, Reconcile: req.Reconcile})
}

// driftEvery parses a schedule's interval: "" or "0" is none.
func driftEvery(v string) (time.Duration, error) {
	if v == "" || v == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, apierr.Invalid("every", "%q is not a duration (e.g. 30m, 6h; \"\" or \"0\" for no schedule)", v)
	}
	if d < minDriftEvery {
		return 0, apierr.Invalid("every", "%s is too short: at least %s", v, minDriftEvery)
	}
	return d, nil
}

// getDrift shows the install's drift schedule and what the checks found.
func (s *Server) getDrift(c echo.Context) error {
	return answerByID(c, s.store.GetInstall, func(ctx context.Context, inst store.Install) (wire.Drift, error) {
		rows, err := s.store.ListDrift(ctx, inst.ID)
		return wire.Drift{DriftSchedule: wire.DriftSchedule{Every: inst.DriftEvery, Reconcile: inst.DriftReconcile},
			Components: views(rows, driftedPartView)}, err
	})
}

// driftCheck starts a drift check now: it takes no lock, so it runs beside
// any operation; one check at a time (409).
func (s *Server) driftCheck(c echo.Context) error {
	ctx, org := c.Request().Context(), orgID(c)
	inst, err := s.store.GetInstall(ctx, org, c.Param("id"))
	if err != nil {
		return err
	}
	if inst.ConfigVersion == 0 {
		return apierr.New(http.StatusConflict, protocol.CodeConflict, "", "install %s runs nothing yet: provision it first", inst.Name)
	}
	if err := s.noDriftCheckRuns(ctx, inst); err != nil {
		return err
	}
	return s.runOperation(c, inst, store.InstallOperation{Kind: store.OpDriftCheck, PlanOnly: true})
}

func (s *Server) noDriftCheckRuns(ctx context.Context, inst store.Install) error {
	running, err := s.store.RunningDriftChecks(ctx, inst.ID)
	if err != nil || len(running) == 0 {
		return err
	}
	return apierr.New(http.StatusConflict, protocol.CodeConflict, "", "a drift check of install %s runs already (operation %s)", inst.Name, running[0].ID)
}

// deleteInstallAndSchedule deletes an install, then its drift schedule.
func (s *Server) deleteInstallAndSchedule(ctx context.Context, orgID, id string) error {
	if err := s.store.DeleteInstall(ctx, orgID, id); err != nil {
		return err
	}
	if s.ops != nil {
		if err := s.ops.SetDriftSchedule(ctx, id, 0); err != nil {
			s.log.Error("deleting an install's drift schedule failed", "install", id, "err", err)
		}
	}
	return nil
}

func driftedPartView(d store.InstallDrift) wire.DriftedPart {
	return wire.DriftedPart{Name: d.Name, Drifted: d.Drifted, Since: d.Since, Plan: d.Plan, OperationID: d.OperationID,
		CheckedAt: d.CheckedAt}
}
