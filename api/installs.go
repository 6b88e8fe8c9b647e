package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/store"
)

// installView shows an install: sensitive input values are left out.
func installView(inst store.Install, runner *wire.RunnerRef) wire.Install {
	return wire.Install{ID: inst.ID, OrgID: inst.OrgID, AppID: inst.AppID, Name: inst.Name, Status: string(inst.Status),
		Inputs: views(inst.Inputs, inputView), InputsVersion: inst.InputsVersion, ConfigVersion: inst.ConfigVersion,
		Labels: labelsView(inst.Labels), MaintenanceWindows: views(inst.MaintenanceWindows, windowView),
		DriftEvery: inst.DriftEvery, DriftReconcile: inst.DriftReconcile, ApprovalMode: string(inst.ApprovalMode),
		Runner: runner, CreatedAt: inst.CreatedAt, UpdatedAt: inst.UpdatedAt}
}

// inputView shows an input; a sensitive one without its value.
func inputView(in store.InstallInput) wire.Input {
	v := wire.Input{Name: in.Name, Sensitive: in.Sensitive}
	if !in.Sensitive {
		v.Value = &in.Value
	}
	return v
}

func (s *Server) createInstall(c echo.Context) error {
	var req wire.CreateInstallRequest
	if err := apierr.Bind(c, &req); err != nil {
		return err
	}
	if req.AppID == "" {
		return apierr.Invalid("app_id", "is required")
	}
	if err := checkLabels("labels", req.Labels); err != nil {
		return err
	}
	sensitive, err := s.declaredSensitive(c.Request().Context(), orgID(c), req.AppID)
	if err != nil {
		return err
	}
	inputs := make([]store.InstallInput, len(req.Inputs))
	for i, in := range req.Inputs {
		inputs[i] = store.InstallInput{Name: in.Name, Value: in.Value, Sensitive: in.Sensitive || sensitive[in.Name]}
	}
	inst, runner, regToken, err := s.store.CreateInstall(c.Request().Context(), orgID(c), req.AppID, req.Name, inputs)
	if err != nil {
		return onField(err, "name")
	}
	noteObject(c.Request().Context(), "install_id", inst.ID)
	noteObject(c.Request().Context(), "runner_id", runner.ID)
	if len(req.Labels) > 0 {
		if inst, err = s.store.SetInstallLabels(c.Request().Context(), inst.OrgID, inst.ID, req.Labels); err != nil {
			return err
		}
	}
	return c.JSON(http.StatusCreated, wire.NewInstall{Install: installView(inst, nil),
		Runner: wire.NewRunner{ID: runner.ID, RegistrationToken: regToken}})
}

// declaredSensitive is which inputs the app's latest config declares
// sensitive (none when it has no config yet): a value given for one is
// sealed and hidden whatever the request says.
func (s *Server) declaredSensitive(ctx context.Context, org, appID string) (map[string]bool, error) {
	ac, err := s.store.LatestAppConfig(ctx, org, appID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	cfg, err := loadConfig(ac)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, in := range cfg.Inputs {
		out[in.Name] = in.Sensitive
	}
	return out, nil
}

func (s *Server) listInstalls(c echo.Context) error {
	ctx, org := c.Request().Context(), orgID(c)
	insts, err := s.store.ListInstalls(ctx, org, c.QueryParam("app_id"))
	if err != nil {
		return err
	}
	runners, err := s.store.ListRunners(ctx, org)
	if err != nil {
		return err
	}
	runnerOf := map[string]*wire.RunnerRef{}
	for _, r := range runners {
		if r.InstallID != nil {
			runnerOf[*r.InstallID] = &wire.RunnerRef{ID: r.ID}
		}
	}
	sums, err := s.store.InstallSummaries(ctx, org)
	if err != nil {
		return err
	}
	health, err := s.installsHealth(c, insts, runners)
	if err != nil {
		return err
	}
	out := make([]wire.InstallListItem, len(insts))
	for i, inst := range insts {
		out[i] = withSummary(installView(inst, runnerOf[inst.ID]), sums[inst.ID])
		h := health[inst.ID]
		out[i].Health = &h
	}
	return c.JSON(http.StatusOK, wire.InstallList{Installs: out})
}

func (s *Server) getInstall(c echo.Context) error {
	return answerByID(c, s.store.GetInstall, func(ctx context.Context, inst store.Install) (wire.Install, error) {
		r, err := s.installRunner(ctx, inst)
		if err != nil || r == nil {
			return installView(inst, nil), err
		}
		return installView(inst, &wire.RunnerRef{ID: r.ID}), nil
	})
}

// installRunner is the install's runner, nil when it has none.
func (s *Server) installRunner(ctx context.Context, inst store.Install) (*store.Runner, error) {
	r, err := s.store.GetInstallRunner(ctx, inst.OrgID, inst.ID)
	switch {
	case err == nil:
		return &r, nil
	case errors.Is(err, store.ErrNotFound):
		return nil, nil
	}
	return nil, err
}

func (s *Server) deleteInstall(c echo.Context) error {
	return deleteByID(c, s.deleteInstallAndSchedule)
}

// withSummary adds what the list of installs shows of each: its newest
// operation and its drifted parts, so a dashboard needs no call per install.
func withSummary(inst wire.Install, sum store.InstallSummary) wire.InstallListItem {
	v := wire.InstallListItem{Install: inst, Drifted: nonNil(sum.Drifted)}
	if op := sum.LastOperation; op != nil {
		v.LastOperation = &wire.LastOperation{ID: op.ID, Kind: op.Kind, Status: string(op.Status), Error: op.Error,
			WaitingApproval: sum.WaitingApproval, CreatedAt: op.CreatedAt, FinishedAt: op.FinishedAt}
	}
	return v
}
