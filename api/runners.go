package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// Runner statuses, computed from when the runner was last seen.
const (
	runnerOnline  = "online"
	runnerOffline = "offline"
)

// runnerView shows a runner, online or offline by when it was last seen;
// never its token hashes.
func (s *Server) runnerView(r store.Runner, load store.RunnerLoad, available map[string]store.RunnerUpdate) wire.Runner {
	status, since := runnerOffline, r.LastSeenAt
	if r.LastSeenAt != nil && s.now().Sub(*r.LastSeenAt) <= s.onlineWindow {
		status, since = runnerOnline, r.OnlineSince
	}
	return wire.Runner{ID: r.ID, OrgID: r.OrgID, Kind: r.Kind, InstallID: r.InstallID, Name: r.Name, Version: r.Version,
		Platform: r.Platform, Capabilities: nonNil(r.Capabilities), RegisteredAt: r.RegisteredAt, LastSeenAt: r.LastSeenAt, Status: status,
		StatusSince: since, RunningJobs: load.Running, QueuedJobs: load.Queued,
		ConnectionErrors: views(r.ConnectionErrors, connectionErrorView), CreatedAt: r.CreatedAt,
		CustomerPolicy: customerPolicyView(r.CustomerPolicy), PausedSince: r.PausedSince, Consents: views(r.Consents, consentView),
		UpdateAvailable: availableView(available, r.ID)}
}

// availableView is the runner's update waiting for its customer, or nil.
func availableView(available map[string]store.RunnerUpdate, runnerID string) *wire.RunnerUpdate {
	u, ok := available[runnerID]
	if !ok {
		return nil
	}
	v := runnerUpdateView(u)
	return &v
}

func connectionErrorView(e protocol.ConnectionError) wire.ConnectionError {
	return wire.ConnectionError{At: e.At, Kind: e.Kind, Message: e.Message}
}

func (s *Server) listRunners(c echo.Context) error {
	ctx, org := c.Request().Context(), orgID(c)
	if _, err := s.store.EnsureBuildRunner(ctx, org); err != nil {
		return err
	}
	runners, err := s.store.ListRunners(ctx, org)
	if err != nil {
		return err
	}
	loads, err := s.store.RunnerLoads(ctx, org, "")
	if err != nil {
		return err
	}
	available, err := s.store.AvailableRunnerUpdates(ctx, org)
	if err != nil {
		return err
	}
	out := make([]wire.Runner, len(runners))
	for i, r := range runners {
		out[i] = s.runnerView(r, loads[r.ID], available)
	}
	return c.JSON(http.StatusOK, wire.RunnerList{Runners: out})
}

func (s *Server) getRunner(c echo.Context) error {
	ctx := c.Request().Context()
	r, err := s.store.GetRunner(ctx, orgID(c), c.Param("id"))
	if err != nil {
		return err
	}
	loads, err := s.store.RunnerLoads(ctx, r.OrgID, r.ID)
	if err != nil {
		return err
	}
	updates, err := s.store.ListRunnerUpdates(ctx, r.OrgID, r.ID, 10)
	if err != nil {
		return err
	}
	available := map[string]store.RunnerUpdate{}
	if len(updates) > 0 && updates[0].Status == status.RunnerUpdateAvailable {
		available[r.ID] = updates[0]
	}
	v := s.runnerView(r, loads[r.ID], available)
	v.Updates = views(updates, runnerUpdateView)
	return c.JSON(http.StatusOK, v)
}

func (s *Server) rotateRegistrationToken(c echo.Context) error {
	id := c.Param("id")
	plain, err := s.store.RotateRegistrationToken(c.Request().Context(), orgID(c), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.RegistrationToken{RunnerID: id, RegistrationToken: plain})
}

func (s *Server) revokeRunnerTokens(c echo.Context) error {
	if err := s.store.RevokeRunnerTokens(c.Request().Context(), orgID(c), c.Param("id")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
