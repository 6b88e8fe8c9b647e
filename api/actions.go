package api

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// installActions loads the config version an install runs (the latest
// before its first provision) with its actions.
func (s *Server) installActions(ctx context.Context, inst store.Install) (*appconfig.Config, int, error) {
	var ac store.AppConfig
	var err error
	if inst.ConfigVersion > 0 {
		ac, err = s.store.GetAppConfig(ctx, inst.OrgID, inst.AppID, inst.ConfigVersion)
	} else {
		ac, err = s.store.LatestAppConfig(ctx, inst.OrgID, inst.AppID)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, 0, errNoConfig(inst.AppID)
	}
	if err != nil {
		return nil, 0, err
	}
	cfg, err := loadConfig(ac)
	return cfg, ac.Version, err
}

// pathInstallConfig loads the config version the path's install runs.
func (s *Server) pathInstallConfig(c echo.Context) (*appconfig.Config, int, error) {
	ctx := c.Request().Context()
	inst, err := s.store.GetInstall(ctx, orgID(c), c.Param("id"))
	if err != nil {
		return nil, 0, err
	}
	return s.installActions(ctx, inst)
}

func (s *Server) listActions(c echo.Context) error {
	cfg, version, err := s.pathInstallConfig(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.ActionList{ConfigVersion: version, Actions: views(cfg.Actions, configActionView)})
}

// manualAction finds the path's action in the install's config: 404 when
// it has none of that name, 409 when it cannot be run by hand or the
// install's runner refuses it.
func (s *Server) manualAction(c echo.Context, inst store.Install) (*appconfig.Action, int, error) {
	ctx, name := c.Request().Context(), c.Param("action")
	cfg, version, err := s.installActions(ctx, inst)
	if err != nil {
		return nil, 0, err
	}
	act, ok := cfg.Action(name)
	if !ok {
		return nil, 0, apierr.New(http.StatusNotFound, protocol.CodeNotFound, "", "config version %d of install %s has no action %q",
			version, inst.Name, name)
	}
	manual := false
	for _, t := range act.Triggers {
		manual = manual || t.Type == appconfig.TriggerManual
	}
	if !manual {
		return nil, 0, apierr.New(http.StatusConflict, protocol.CodeConflict, "", "action %q has no manual trigger: it is not run by hand", name)
	}
	return act, version, s.refusedByRunner(ctx, inst, protocol.JobTypeAction, name, "")
}

// runInputs checks a run's inputs against the action's (a 400 names the
// first bad one, "inputs.<name>") and parts the sensitive ones.
func runInputs(act *appconfig.Action, given map[string]string) (plain, sensitive map[string]string, err error) {
	return checkedInputs(act.CheckRunInputs, act.Inputs, given)
}

// checkedInputs checks given with check (an action's or a runbook's
// CheckRunInputs: a 400 names the first bad one) and parts them by decls
// into plain and sensitive.
func checkedInputs(check func(map[string]string) (map[string]any, error), decls []appconfig.Input,
	given map[string]string) (plain, sensitive map[string]string, err error) {
	if _, err := check(given); err != nil {
		var ps appconfig.Problems
		if errors.As(err, &ps) && len(ps) > 0 {
			msgs := make([]string, len(ps))
			for i, p := range ps {
				msgs[i] = p.Message
			}
			return nil, nil, apierr.Invalid(ps[0].Key, "%s", strings.Join(msgs, "; "))
		}
		return nil, nil, apierr.Invalid("inputs", "%v", err)
	}
	plain, sensitive = map[string]string{}, map[string]string{}
	for k, v := range given {
		if slices.ContainsFunc(decls, func(in appconfig.Input) bool { return in.Name == k && in.Sensitive }) {
			sensitive[k] = v
		} else {
			plain[k] = v
		}
	}
	return plain, sensitive, nil
}

func (s *Server) runAction(c echo.Context) error {
	ctx, org := c.Request().Context(), orgID(c)
	inst, err := s.store.GetInstall(ctx, org, c.Param("id"))
	if err != nil {
		return err
	}
	var req wire.RunActionRequest
	if err := apierr.Bind(c, &req); err != nil {
		return err
	}
	act, version, err := s.manualAction(c, inst)
	if err != nil {
		return err
	}
	plain, sensitive, err := runInputs(act, req.Inputs)
	if err != nil {
		return err
	}
	if s.ops == nil {
		return errNoOps()
	}
	id := store.NewID("act")
	by, byUser := startedBy(ctx)
	run, err := s.store.CreateActionRun(ctx, store.ActionRun{ID: id, OrgID: org, InstallID: inst.ID, Action: act.Name,
		ConfigVersion: version, Trigger: appconfig.TriggerManual, Inputs: plain, SensitiveInputs: sensitive,
		WorkflowID: contract.ActionRunWorkflowID(inst.ID, act.Name, id), StartedBy: by, StartedByUser: byUser}, actionStepNames(act))
	if err != nil {
		return err
	}
	noteObject(ctx, "action_run_id", run.ID)
	if err := s.ops.StartActionRun(ctx, run); err != nil {
		// Nothing will run it: record that, so the run does not stay queued.
		if ferr := s.store.FinishActionRun(context.WithoutCancel(ctx), run.ID, status.JobFailed, "the run's workflow could not be started"); ferr != nil {
			s.log.Error("recording an action run that did not start failed", "run", run.ID, "err", ferr)
		}
		return opsFailed("starting the action run", err)
	}
	return s.answerActionRun(c, http.StatusCreated, run)
}

func actionStepNames(act *appconfig.Action) []string {
	out := make([]string, len(act.Steps))
	for i, st := range act.Steps {
		out[i] = st.Name
	}
	return out
}
