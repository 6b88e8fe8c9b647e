package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// masked shows a run's plain values and its sensitive ones' names only.
func masked(plain, sensitive map[string]string) map[string]string {
	out := make(map[string]string, len(plain)+len(sensitive))
	for k, v := range plain {
		out[k] = v
	}
	for k := range sensitive {
		out[k] = appconfig.RedactedValue
	}
	return out
}

func actionRunView(r store.ActionRun) wire.ActionRun {
	return wire.ActionRun{ID: r.ID, InstallID: r.InstallID, Action: r.Action, ConfigVersion: r.ConfigVersion, Trigger: r.Trigger,
		Inputs: masked(r.Inputs, r.SensitiveInputs), WorkflowID: r.WorkflowID, Status: string(r.Status), StartedBy: r.StartedBy,
		Error: r.Error, CreatedAt: r.CreatedAt, FinishedAt: r.FinishedAt, OperationID: r.OperationID, OperationStep: r.OperationStep,
		Exclusive: r.Exclusive}
}

func actionRunStepView(s store.ActionRunStep) wire.ActionRunStep {
	return wire.ActionRunStep{Index: s.StepIndex, Name: s.Name, Status: string(s.Status), JobID: s.JobID, ExitCode: s.ExitCode,
		Outputs: masked(s.Outputs, s.SensitiveOutputs), Error: s.Error, StartedAt: s.StartedAt, FinishedAt: s.FinishedAt}
}

// answerActionRun answers a run with its steps.
func (s *Server) answerActionRun(c echo.Context, code int, run store.ActionRun) error {
	return answerWithSteps(c, code, run.ID, s.store.ListActionRunSteps, func(steps []store.ActionRunStep) wire.ActionRun {
		v := actionRunView(run)
		v.Steps = views(steps, actionRunStepView)
		return v
	})
}

func (s *Server) listActionRuns(c echo.Context) error {
	return listBelowInstall(s, c, namedRuns(c, "action", s.store.ListActionRuns),
		func(runs []store.ActionRun) wire.ActionRunList {
			return wire.ActionRunList{Runs: views(runs, actionRunView)}
		})
}

func (s *Server) getActionRun(c echo.Context) error {
	run, err := installChild(s, c, "run", "action run", s.store.GetActionRun,
		func(r store.ActionRun) string { return r.InstallID })
	if err != nil {
		return err
	}
	return s.answerActionRun(c, http.StatusOK, run)
}

// cancelActionRun cancels a run's workflow: its running step's job is
// cancelled (the runner stops its process) and the workflow records the
// run's end (cancelled) itself; a run that has already finished is a
// conflict.
func (s *Server) cancelActionRun(c echo.Context) error {
	run, err := installChild(s, c, "run", "action run", s.store.GetActionRun,
		func(r store.ActionRun) string { return r.InstallID })
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	asked, err := s.cancelWorkflow(ctx, "action run", run.WorkflowID, store.ActionRunDone(run), func() (bool, error) {
		run, err = s.store.GetActionRun(ctx, run.OrgID, run.ID)
		return store.ActionRunDone(run), err
	})
	switch {
	case err != nil:
		return err
	case asked:
		return s.answerActionRun(c, http.StatusAccepted, run)
	}
	return apierr.New(http.StatusConflict, protocol.CodeConflict, "", "action run %s has already finished (%s)", run.ID, run.Status)
}
