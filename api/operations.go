package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// maxOperationWait is how long a GET may wait for an operation to finish.
const maxOperationWait = 60

// startOperation records an operation of kind on the path's install (and
// component), takes the install's lock and starts its workflow.
func (s *Server) startOperation(c echo.Context, kind string) error {
	ctx := c.Request().Context()
	inst, req, err := pathRequest[wire.OperationRequest](c, s.store.GetInstall)
	if err != nil {
		return err
	}
	component := c.Param("name")
	if req.WithDependents && component == "" {
		return apierr.Invalid("with_dependents", "only applies to a component's deploy or teardown")
	}
	if err := checkForget(ctx, kind, req); err != nil {
		return err
	}
	if !req.PlanOnly {
		if err := s.refusedByRunner(ctx, inst, "", "", kind); err != nil {
			return err
		}
	}
	return s.runOperation(c, inst, store.InstallOperation{Kind: kind, Component: component,
		WithDependents: req.WithDependents, PlanOnly: req.PlanOnly, InMaintenanceWindow: req.InMaintenanceWindow,
		Forget: req.Forget})
}

// checkForget refuses forget on an operation other than a deprovision, or
// with plan_only; a deprovision with forget is noted in its audit event.
func checkForget(ctx context.Context, kind string, req wire.OperationRequest) error {
	switch {
	case !req.Forget:
		return nil
	case kind != store.OpDeprovision:
		return apierr.Invalid("forget", "only applies to a deprovision")
	case req.PlanOnly:
		return apierr.Invalid("forget", "does not go with plan_only: a plan destroys nothing, so leaves nothing behind")
	}
	noteObject(ctx, "forget", "true")
	return nil
}

// beginOperation records op (its kind, component and options set) on inst
// with its config version: when not set, the one the install runs for an
// operation on what it runs (runsInstalledVersion), else the app's latest.
// It takes the install's lock (409 when another operation holds it).
func (s *Server) beginOperation(ctx context.Context, inst store.Install, op store.InstallOperation) (store.InstallOperation, error) {
	if s.ops == nil {
		return op, errNoOps()
	}
	if op.ConfigVersion == 0 && runsInstalledVersion(op.Kind) {
		op.ConfigVersion = inst.ConfigVersion
	}
	if op.ConfigVersion == 0 {
		version, err := s.store.LatestConfigVersion(ctx, inst.OrgID, inst.AppID)
		if err != nil {
			return op, err
		}
		if version == 0 {
			return op, errNoConfig(inst.AppID)
		}
		op.ConfigVersion = version
	}
	op.OrgID, op.InstallID, op.ApprovalMode = inst.OrgID, inst.ID, inst.ApprovalMode
	if op.StartedBy == "" {
		op.StartedBy, op.StartedByUser = startedBy(ctx)
	}
	op.WorkflowID = contract.OperationWorkflowID(inst.ID, op.Kind, op.Component)
	op, err := s.store.StartOperation(ctx, op)
	noteObject(ctx, "operation_id", op.ID)
	return op, err
}

// runsInstalledVersion: an operation of kind acts on what the install runs
// (a deprovision, a reprovision, a component's teardown, an input update),
// so it runs the install's config version; a provision and a component's
// deploy run the latest, a deploy_config the one it names.
func runsInstalledVersion(kind string) bool {
	return kind == store.OpDeprovision || kind == store.OpReprovision || kind == store.OpTeardownComponent ||
		kind == store.OpUpdateInputs || kind == store.OpDriftCheck
}

// runOperation begins op on inst (beginOperation), starts its workflow
// (launchOperation) and answers it, 202.
func (s *Server) runOperation(c echo.Context, inst store.Install, op store.InstallOperation) error {
	ctx := c.Request().Context()
	op, err := s.beginOperation(ctx, inst, op)
	if err != nil {
		return err
	}
	if err := s.launchOperation(ctx, op); err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, operationView(op))
}

// launchOperation starts a begun operation's workflow; one that cannot start
// is recorded as failed, releasing the install.
func (s *Server) launchOperation(ctx context.Context, op store.InstallOperation) error {
	if err := s.ops.StartOperation(ctx, op); err != nil {
		s.abandonOperation(ctx, op, "the operation's workflow could not be started")
		return opsFailed("starting the operation", err)
	}
	return nil
}

// abandonOperation records a begun operation that will not run as failed.
func (s *Server) abandonOperation(ctx context.Context, op store.InstallOperation, why string) {
	if err := s.store.FinishOperation(context.WithoutCancel(ctx), op.ID, status.OpFailed, why, ""); err != nil {
		s.log.Error("recording an operation that did not start failed", "operation", op.ID, "err", err)
	}
}

// errNoConfig answers an operation on an install whose app has no config.
func errNoConfig(appID string) error {
	return apierr.New(http.StatusConflict, protocol.CodeConflict, "", "the app has no config yet: sync one with POST /v1/apps/%s/configs", appID)
}

func (s *Server) provision(c echo.Context) error   { return s.startOperation(c, store.OpProvision) }
func (s *Server) deprovision(c echo.Context) error { return s.startOperation(c, store.OpDeprovision) }
func (s *Server) reprovision(c echo.Context) error { return s.startOperation(c, store.OpReprovision) }
func (s *Server) deployComponent(c echo.Context) error {
	return s.startOperation(c, store.OpDeployComponent)
}
func (s *Server) teardownComponent(c echo.Context) error {
	return s.startOperation(c, store.OpTeardownComponent)
}
func (s *Server) updateInputs(c echo.Context) error { return s.startOperation(c, store.OpUpdateInputs) }

func (s *Server) listOperations(c echo.Context) error {
	return listBelowInstall(s, c, s.store.ListOperations, func(ops []store.InstallOperation) wire.OperationList {
		return wire.OperationList{Operations: views(ops, operationView)}
	})
}

// installOperation reads the operation named in the path, if it is one of
// the path's install's (in the token's org).
func (s *Server) installOperation(c echo.Context) (store.InstallOperation, error) {
	return installChild(s, c, "op", "operation", s.store.GetOperation,
		func(op store.InstallOperation) string { return op.InstallID })
}

func operationFinished(op store.InstallOperation) bool { return op.FinishedAt != nil }

func (s *Server) getOperation(c echo.Context) error {
	wait, err := queryInt(c, "wait", 0, 0, maxOperationWait)
	if err != nil {
		return err
	}
	op, err := s.installOperation(c)
	if err != nil {
		return err
	}
	if wait > 0 && !operationFinished(op) && s.ops != nil {
		ctx, cancel := s.waitContext(c.Request().Context(), wait)
		s.ops.AwaitWorkflow(ctx, op.WorkflowID)
		cancel()
		if op, err = s.store.GetOperation(c.Request().Context(), op.OrgID, op.ID); err != nil {
			return err
		}
	}
	return c.JSON(http.StatusOK, operationView(op))
}

// cancelOperation cancels an operation's workflow, which records the end
// (cancelled) itself; one that has already finished is a conflict.
func (s *Server) cancelOperation(c echo.Context) error {
	op, err := s.installOperation(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	asked, err := s.cancelWorkflow(ctx, "operation", op.WorkflowID, operationFinished(op), func() (bool, error) {
		op, err = s.store.GetOperation(ctx, op.OrgID, op.ID)
		return operationFinished(op), err
	})
	switch {
	case err != nil:
		return err
	case asked:
		return c.JSON(http.StatusAccepted, operationView(op))
	}
	return apierr.New(http.StatusConflict, protocol.CodeConflict, "", "operation %s has already finished (%s)", op.ID, op.Status)
}

func (s *Server) approveStep(c echo.Context) error { return s.decideStep(c, true) }
func (s *Server) denyStep(c echo.Context) error    { return s.decideStep(c, false) }

// decideStep approves or denies a plan that waits for approval.
func (s *Server) decideStep(c echo.Context, approve bool) error {
	op, err := s.installOperation(c)
	if err != nil {
		return err
	}
	name := c.Param("step")
	var step *store.InstallStep
	for i := range op.Steps {
		if op.Steps[i].Name == name {
			step = &op.Steps[i]
		}
	}
	if step == nil {
		return fmt.Errorf("step %s of operation %s: %w", name, op.ID, store.ErrNotFound)
	}
	ctx, p := c.Request().Context(), caller(c)
	noteObject(ctx, "step_id", step.ID)
	if step.Status != status.StepWaitingApproval {
		return apierr.New(http.StatusConflict, protocol.CodeConflict, "", "step %s is %s, not waiting for approval", name, step.Status)
	}
	if err := s.checkFourEyes(c, op, approve); err != nil {
		return err
	}
	if s.ops == nil {
		return errNoOps()
	}
	decision := status.DecisionApproved
	if !approve {
		decision = status.DecisionDenied
	}
	// Recorded first: the workflow applies only what the store says approved.
	by := store.Decider{UserID: p.user.ID, Name: p.name()}
	if err := s.store.RecordStepDecision(ctx, op.ID, name, decision, by); err != nil {
		return err
	}
	if err := s.ops.SignalApproval(ctx, op.WorkflowID, name, approve); err != nil {
		return opsFailed("sending the decision", err)
	}
	return c.JSON(http.StatusAccepted, wire.Decision{OperationID: op.ID, Step: name, Decision: string(decision), DecidedBy: by.Name})
}

func (s *Server) setApprovalMode(c echo.Context) error {
	ctx, org := c.Request().Context(), orgID(c)
	var req wire.ApprovalMode
	if err := apierr.Bind(c, &req); err != nil {
		return err
	}
	if err := s.store.SetApprovalMode(ctx, org, c.Param("id"), req.ApprovalMode); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, req)
}

// getOutputs shows the install's sandbox and component outputs; sensitive
// values are never shown.
func (s *Server) getOutputs(c echo.Context) error {
	return answerByID(c, s.store.GetInstall, s.outputsView)
}

// outputsView reads the install's outputs, sensitive values masked.
func (s *Server) outputsView(ctx context.Context, inst store.Install) (wire.Outputs, error) {
	rows, err := s.store.ListOutputs(ctx, inst.ID)
	if err != nil {
		return wire.Outputs{}, err
	}
	out := map[string]map[string]wire.Output{}
	for name, raw := range rows {
		var o protocol.TerraformApplyOutputs
		if err := json.Unmarshal([]byte(raw), &o); err != nil {
			return wire.Outputs{}, fmt.Errorf("outputs of %s: %w", name, err)
		}
		shown := map[string]wire.Output{}
		for k, v := range o.Outputs {
			if v.Sensitive {
				shown[k] = wire.Output{Sensitive: true}
				continue
			}
			shown[k] = wire.Output{Value: v.Value}
		}
		out[name] = shown
	}
	return wire.Outputs{Outputs: out}, nil
}

// operationView shows an operation and its steps; a step's rendering
// digest stays inside.
func operationView(op store.InstallOperation) wire.Operation {
	return wire.Operation{ID: op.ID, OrgID: op.OrgID, InstallID: op.InstallID, Kind: op.Kind, Component: op.Component,
		WithDependents: op.WithDependents, PlanOnly: op.PlanOnly, ApprovalMode: string(op.ApprovalMode),
		ConfigVersion: op.ConfigVersion, WorkflowID: op.WorkflowID, Status: string(op.Status),
		Forget: op.Forget, InMaintenanceWindow: op.InMaintenanceWindow, WaitingUntil: op.WaitingUntil, TriggeredBy: op.TriggeredBy,
		Source: op.Source, BundleIndex: op.BundleIndex,
		StartedBy: op.StartedBy, WaitingReason: op.WaitingReason, Error: op.Error, CreatedAt: op.CreatedAt, FinishedAt: op.FinishedAt, Steps: views(op.Steps, stepView)}
}

func stepView(st store.InstallStep) wire.Step {
	return wire.Step{ID: st.ID, Name: st.Name, Destroy: st.Destroy, After: nonNil(st.After), Status: string(st.Status),
		PlanJobID: st.PlanJobID, ApplyJobID: st.ApplyJobID, BuildID: st.BuildID, SyncJobID: st.SyncJobID,
		HasChanges: st.HasChanges, Add: st.Add, Change: st.Change, DestroyCount: st.Remove, Plan: st.PlanText,
		Policies: policyViews(st.Policies), Decision: string(st.Decision), DecidedBy: st.DecidedBy, DecidedAt: st.DecidedAt,
		LeftBehind: st.LeftBehind, Error: st.Error, StartedAt: st.StartedAt, FinishedAt: st.FinishedAt}
}

func policyViews(rs []protocol.PolicyResult) []wire.PolicyResult {
	if len(rs) == 0 {
		return nil
	}
	return rs
}
