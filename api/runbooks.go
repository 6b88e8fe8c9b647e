package api

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract"
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
	rb, version, err := configDef(s, c, inst, "runbook", (*appconfig.Config).Runbook)
	if err != nil {
		return nil, 0, err
	}
	ctx := c.Request().Context()
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
	o, err := readRunOrder(s, c, bodyInputs(func(r wire.RunRunbookRequest) map[string]string { return r.Inputs }),
		s.installRunbook, func(rb *appconfig.Runbook, given map[string]string) (plain, sensitive map[string]string, err error) {
			return checkedInputs(rb.CheckRunInputs, rb.Inputs, given)
		})
	if err != nil {
		return err
	}
	ctx, rb, id := c.Request().Context(), o.def, store.NewID("rbr")
	steps := make([]store.RunbookRunStep, len(rb.Steps))
	for i, st := range rb.Steps {
		steps[i] = store.RunbookRunStep{Name: st.Name, Kind: st.Kind, Target: st.Action + st.Component}
	}
	run, err := s.store.CreateRunbookRun(ctx, store.RunbookRun{ID: id, OrgID: o.inst.OrgID, InstallID: o.inst.ID, Runbook: rb.Name,
		ConfigVersion: o.version, Inputs: o.plain, SensitiveInputs: o.sensitive, WorkflowID: contract.RunbookRunWorkflowID(o.inst.ID, rb.Name, id),
		StartedBy: o.by, StartedByUser: o.byUser}, steps)
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
	start := func(ctx context.Context) error { return s.ops.StartRunbookRun(ctx, run) }
	return s.startRecordedRun(ctx, "runbook run", run.ID, start, s.store.FinishRunbookRun)
}
