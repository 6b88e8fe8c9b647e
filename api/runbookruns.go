package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

func runbookRunView(r store.RunbookRun) wire.RunbookRun {
	return wire.RunbookRun{ID: r.ID, InstallID: r.InstallID, Runbook: r.Runbook, ConfigVersion: r.ConfigVersion,
		Inputs: masked(r.Inputs, r.SensitiveInputs), WorkflowID: r.WorkflowID, Status: string(r.Status), StartedBy: r.StartedBy,
		Error: r.Error, CreatedAt: r.CreatedAt, FinishedAt: r.FinishedAt}
}

func runbookRunStepView(s store.RunbookRunStep) wire.RunbookRunStep {
	return wire.RunbookRunStep{Index: s.StepIndex, Name: s.Name, Kind: s.Kind, Status: string(s.Status), Target: s.Target,
		ActionRunID: s.ActionRunID, OperationID: s.OperationID, ApprovedBy: s.ApprovedBy, Error: s.Error,
		StartedAt: s.StartedAt, FinishedAt: s.FinishedAt}
}

// answerRunbookRun answers a run with its steps.
func (s *Server) answerRunbookRun(c echo.Context, code int, run store.RunbookRun) error {
	return answerWithSteps(c, code, run.ID, s.store.ListRunbookRunSteps, func(steps []store.RunbookRunStep) wire.RunbookRun {
		v := runbookRunView(run)
		v.Steps = views(steps, runbookRunStepView)
		return v
	})
}

func (s *Server) listRunbookRuns(c echo.Context) error {
	return listBelowInstall(s, c, namedRuns(c, "runbook", s.store.ListRunbookRuns),
		func(runs []store.RunbookRun) wire.RunbookRunList {
			return wire.RunbookRunList{Runs: views(runs, runbookRunView)}
		})
}

// installRunbookRun reads the run named in the path, if it is one of the
// path's install's.
func (s *Server) installRunbookRun(c echo.Context) (store.RunbookRun, error) {
	return installChild(s, c, "runbook_run", "runbook run", s.store.GetRunbookRun, func(r store.RunbookRun) string { return r.InstallID })
}

// workflowRunbookRun is installRunbookRun for a route that signals or
// starts the run's workflow: 503 when this server runs none.
func (s *Server) workflowRunbookRun(c echo.Context) (store.RunbookRun, error) {
	run, err := s.installRunbookRun(c)
	if err == nil && s.ops == nil {
		err = errNoOps()
	}
	return run, err
}

func (s *Server) getRunbookRun(c echo.Context) error {
	run, err := s.installRunbookRun(c)
	if err != nil {
		return err
	}
	return s.answerRunbookRun(c, http.StatusOK, run)
}

// approveRunbookRun approves the gate a run waits at (409 when it waits at
// none): recorded first, then signalled to the run's workflow.
func (s *Server) approveRunbookRun(c echo.Context) error {
	run, err := s.workflowRunbookRun(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	step, err := s.store.ApproveRunbookStep(ctx, run.ID, caller(c).name())
	if err != nil {
		return err
	}
	if err := s.ops.SignalRunbookApproval(ctx, run.WorkflowID, step.StepIndex); err != nil {
		return opsFailed("sending the approval", err)
	}
	return s.answerRunbookRun(c, http.StatusAccepted, run)
}

// resumeRunbookRun starts a failed or cancelled run again from its first
// step that did not succeed (409 for any other run).
func (s *Server) resumeRunbookRun(c echo.Context) error {
	run, err := s.workflowRunbookRun(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if run, err = s.store.ResumeRunbookRun(ctx, run.OrgID, run.ID); err != nil {
		return err
	}
	if err := s.startRunbookRun(ctx, run); err != nil {
		return err
	}
	return s.answerRunbookRun(c, http.StatusAccepted, run)
}

// cancelRunbookRun cancels a run's workflow, which cancels its running step
// and records the run's end (cancelled) itself; a run that has already
// finished is a conflict.
func (s *Server) cancelRunbookRun(c echo.Context) error {
	run, err := s.installRunbookRun(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	asked, err := s.cancelWorkflow(ctx, "runbook run", run.WorkflowID, store.RunbookRunDone(run), func() (bool, error) {
		run, err = s.store.GetRunbookRun(ctx, run.OrgID, run.ID)
		return store.RunbookRunDone(run), err
	})
	switch {
	case err != nil:
		return err
	case asked:
		return s.answerRunbookRun(c, http.StatusAccepted, run)
	}
	return apierr.New(http.StatusConflict, protocol.CodeConflict, "", "runbook run %s has already finished (%s)", run.ID, run.Status)
}
