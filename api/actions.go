package api

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

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
	act, version, err := configDef(s, c, inst, "action", (*appconfig.Config).Action)
	if err != nil {
		return nil, 0, err
	}
	ctx, name := c.Request().Context(), c.Param("action")
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

func (s *Server) runAction(c echo.Context) error {
	o, err := readRunOrder(s, c, bodyInputs(func(r wire.RunActionRequest) map[string]string { return r.Inputs }),
		s.manualAction, runInputs)
	if err != nil {
		return err
	}
	ctx, act, id := c.Request().Context(), o.def, store.NewID("act")
	run, err := s.store.CreateActionRun(ctx, store.ActionRun{ID: id, OrgID: o.inst.OrgID, InstallID: o.inst.ID, Action: act.Name,
		ConfigVersion: o.version, Trigger: appconfig.TriggerManual, Inputs: o.plain, SensitiveInputs: o.sensitive,
		WorkflowID: contract.ActionRunWorkflowID(o.inst.ID, act.Name, id), StartedBy: o.by, StartedByUser: o.byUser,
		Exclusive: act.Exclusive}, actionStepNames(act))
	if err != nil {
		return err
	}
	noteObject(ctx, "action_run_id", run.ID)
	start := func(ctx context.Context) error { return s.ops.StartActionRun(ctx, run) }
	if err := s.startRecordedRun(ctx, "action run", run.ID, start, s.store.FinishActionRun); err != nil {
		return err
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
