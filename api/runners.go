package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// Runner statuses, computed from when the runner was last seen.
const (
	runnerOnline  = "online"
	runnerOffline = "offline"
)

type runnerView struct {
	ID           string     `json:"id"`
	OrgID        string     `json:"org_id"`
	Kind         string     `json:"kind"`
	InstallID    *string    `json:"install_id"`
	Name         string     `json:"name"`
	Version      string     `json:"version"`
	Capabilities []string   `json:"capabilities"`
	RegisteredAt *time.Time `json:"registered_at"`
	LastSeenAt   *time.Time `json:"last_seen_at"`
	Status       string     `json:"status"`
	// StatusSince is since when it has been online (its first call after
	// a gap), or offline (its last call); null when never seen.
	StatusSince *time.Time `json:"status_since"`
	// RunningJobs and QueuedJobs: the runner's jobs under way and waiting
	// to be claimed.
	RunningJobs int `json:"running_jobs"`
	QueuedJobs  int `json:"queued_jobs"`
	// ConnectionErrors are the runner's latest failed calls to the gateway,
	// as it reported them once it got through again, oldest first.
	ConnectionErrors []protocol.ConnectionError `json:"connection_errors"`
	// Updates are its latest updates (GET /runners/{id} only).
	Updates   []store.RunnerUpdate `json:"updates,omitempty"`
	CreatedAt time.Time            `json:"created_at"`
}

func (s *Server) runnerView(r store.Runner, load store.RunnerLoad) runnerView {
	status, since := runnerOffline, r.LastSeenAt
	if r.LastSeenAt != nil && s.now().Sub(*r.LastSeenAt) <= s.onlineWindow {
		status, since = runnerOnline, r.OnlineSince
	}
	caps := r.Capabilities
	if caps == nil {
		caps = []string{}
	}
	v := runnerView{ID: r.ID, OrgID: r.OrgID, Kind: r.Kind, InstallID: r.InstallID, Name: r.Name, Version: r.Version,
		Capabilities: caps, RegisteredAt: r.RegisteredAt, LastSeenAt: r.LastSeenAt, Status: status, StatusSince: since,
		RunningJobs: load.Running, QueuedJobs: load.Queued, ConnectionErrors: r.ConnectionErrors, CreatedAt: r.CreatedAt}
	if v.ConnectionErrors == nil {
		v.ConnectionErrors = []protocol.ConnectionError{}
	}
	return v
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
	out := make([]runnerView, len(runners))
	for i, r := range runners {
		out[i] = s.runnerView(r, loads[r.ID])
	}
	return c.JSON(http.StatusOK, map[string]any{"runners": out})
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
	v := s.runnerView(r, loads[r.ID])
	if v.Updates, err = s.store.ListRunnerUpdates(ctx, r.OrgID, r.ID, 10); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, v)
}

type registrationTokenView struct {
	RunnerID          string `json:"runner_id"`
	RegistrationToken string `json:"registration_token"`
}

func (s *Server) rotateRegistrationToken(c echo.Context) error {
	id := c.Param("id")
	plain, err := s.store.RotateRegistrationToken(c.Request().Context(), orgID(c), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, registrationTokenView{RunnerID: id, RegistrationToken: plain})
}

func (s *Server) revokeRunnerTokens(c echo.Context) error {
	if err := s.store.RevokeRunnerTokens(c.Request().Context(), orgID(c), c.Param("id")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
