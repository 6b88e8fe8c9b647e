package api

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

func configRunbookView(r *appconfig.Runbook) wire.ConfigRunbook {
	return wire.ConfigRunbook{Name: r.Name, File: r.File, Description: r.Description, Inputs: views(r.Inputs, configInputView),
		Steps: views(r.Steps, func(s appconfig.RunbookStep) wire.ConfigRunbookStep {
			return wire.ConfigRunbookStep{Name: s.Name, Kind: s.Kind, Action: s.Action, Component: s.Component, Inputs: s.Inputs,
				Description: s.Description}
		})}
}

func (s *Server) listRunbooks(c echo.Context) error {
	cfg, version, err := s.pathInstallConfig(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.RunbookList{ConfigVersion: version, Runbooks: views(cfg.Runbooks, configRunbookView)})
}

// installRunbook finds the path's runbook in the install's config (404 when
// it has none of that name) and checks the install's runner allows what its
// steps run (409 when not).
func (s *Server) installRunbook(c echo.Context, inst store.Install) (*appconfig.Runbook, int, error) {
	ctx, name := c.Request().Context(), c.Param("runbook")
	cfg, version, err := s.installActions(ctx, inst)
	if err != nil {
		return nil, 0, err
	}
	rb, ok := cfg.Runbook(name)
	if !ok {
		return nil, 0, apierr.New(http.StatusNotFound, protocol.CodeNotFound, "", "config version %d of install %s has no runbook %q",
			version, inst.Name, name)
	}
	for _, st := range rb.Steps {
		var err error
		switch st.Kind {
		case appconfig.StepAction:
			err = s.refusedByRunner(ctx, inst, protocol.JobTypeAction, st.Action, "")
		case appconfig.StepDeploy:
			err = s.refusedByRunner(ctx, inst, "", "", contract.OpDeployComponent)
		case appconfig.StepReprovision:
			err = s.refusedByRunner(ctx, inst, "", "", contract.OpReprovision)
		}
		if err != nil {
			return nil, 0, err
		}
	}
	return rb, version, nil
}

func (s *Server) runRunbook(c echo.Context) error {
	ctx, org := c.Request().Context(), orgID(c)
	inst, err := s.store.GetInstall(ctx, org, c.Param("id"))
	if err != nil {
		return err
	}
	var req wire.RunRunbookRequest
	if err := apierr.Bind(c, &req); err != nil {
		return err
	}
	rb, version, err := s.installRunbook(c, inst)
	if err != nil {
		return err
	}
	plain, sensitive, err := checkedInputs(rb.CheckRunInputs, rb.Inputs, req.Inputs)
	if err != nil {
		return err
	}
	if s.ops == nil {
		return errNoOps()
	}
	id := store.NewID("rbr")
	by, byUser := startedBy(ctx)
	steps := make([]store.RunbookRunStep, len(rb.Steps))
	for i, st := range rb.Steps {
		steps[i] = store.RunbookRunStep{Name: st.Name, Kind: st.Kind, Target: st.Action + st.Component}
	}
	run, err := s.store.CreateRunbookRun(ctx, store.RunbookRun{ID: id, OrgID: org, InstallID: inst.ID, Runbook: rb.Name,
		ConfigVersion: version, Inputs: plain, SensitiveInputs: sensitive, WorkflowID: contract.RunbookRunWorkflowID(inst.ID, rb.Name, id),
		StartedBy: by, StartedByUser: byUser}, steps)
	if err != nil {
		return err
	}
	noteObject(ctx, "runbook_run_id", run.ID)
	if err := s.startRunbookRun(ctx, run); err != nil {
		return err
	}
	return s.answerRunbookRun(c, http.StatusCreated, run)
}

// startRunbookRun starts a recorded (or resumed) run's workflow; one that
// cannot start is recorded failed, so the run does not stay queued (and may
// be resumed).
func (s *Server) startRunbookRun(ctx context.Context, run store.RunbookRun) error {
	if err := s.ops.StartRunbookRun(ctx, run); err != nil {
		if ferr := s.store.FinishRunbookRun(context.WithoutCancel(ctx), run.ID, status.JobFailed, "the run's workflow could not be started"); ferr != nil {
			s.log.Error("recording a runbook run that did not start failed", "run", run.ID, "err", ferr)
		}
		return opsFailed("starting the runbook run", err)
	}
	return nil
}
