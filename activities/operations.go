package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// OperationConfig are the operation settings of the activities.
type OperationConfig struct {
	// RunnerTimeout is how long an operation waits for the install's runner
	// to come online (default 10m).
	RunnerTimeout time.Duration
	// OnlineWindow: a runner seen within it is online (default 90s).
	OnlineWindow time.Duration
	// JobWait bounds one terraform job, queueing included (default 1h).
	JobWait time.Duration
	// GatewayURL is the gateway's URL as runners reach it (the terraform
	// state backend lives there).
	GatewayURL string
	// RegistryAddress is the vendor registry's host:port as runners reach
	// it; RegistryPlainHTTP says it speaks HTTP (a loopback registry).
	RegistryAddress   string
	RegistryPlainHTTP bool
}

func (a *Activities) opConfig() OperationConfig {
	c := a.Operations
	if c.RunnerTimeout <= 0 {
		c.RunnerTimeout = 10 * time.Minute
	}
	if c.OnlineWindow <= 0 {
		c.OnlineWindow = store.DefaultOnlineWindow
	}
	if c.JobWait <= 0 {
		c.JobWait = time.Hour
	}
	return c
}

// BeginOperation turns a recorded operation into its plan of steps.
func (a *Activities) BeginOperation(ctx context.Context, opID string) (_ contract.OperationPlan, err error) {
	defer classified(&err)
	op, err := a.Store.GetOperationByID(ctx, opID)
	if err != nil {
		return contract.OperationPlan{}, err
	}
	graph, err := a.installGraph(ctx, op.InstallID, op.ConfigVersion)
	if err != nil {
		return contract.OperationPlan{}, err
	}
	cfg := a.opConfig()
	p := contract.OperationPlan{InstallID: op.InstallID, Kind: op.Kind, ApprovalMode: op.ApprovalMode, PlanOnly: op.PlanOnly,
		ConfigVersion: graph.Version, RunnerTimeout: cfg.RunnerTimeout, JobWait: cfg.JobWait,
		InMaintenanceWindow: op.InMaintenanceWindow}
	p.Steps, err = planSteps(op, graph)
	if err != nil {
		return contract.OperationPlan{}, temporal.NewNonRetryableApplicationError(err.Error(), "InvalidOperation", err)
	}
	switch op.Kind {
	case store.OpUpdateInputs:
		changed, err := a.changedSteps(ctx, op, p.Steps)
		if err != nil {
			return contract.OperationPlan{}, err
		}
		markChanged(p.Steps, changed)
	case store.OpDeployConfig:
		if p.Steps, err = a.planConfigDeploy(ctx, op, p.Steps); err != nil {
			return contract.OperationPlan{}, err
		}
	case store.OpDeprovision:
		if p.Steps, err = a.planDeprovision(ctx, op, p.Steps); err != nil {
			return contract.OperationPlan{}, err
		}
	case store.OpDriftCheck:
		p.Steps = driftSteps(p.Steps)
	case store.OpReconcileDrift:
		if err := a.planReconcile(ctx, op, p.Steps); err != nil {
			return contract.OperationPlan{}, err
		}
	}
	rows := make([]store.NewStep, len(p.Steps))
	for i, st := range p.Steps {
		rows[i] = store.NewStep{Name: st.Name, After: st.After, Destroy: st.Destroy}
	}
	if err := a.Store.AddSteps(ctx, opID, rows); err != nil {
		return contract.OperationPlan{}, err
	}
	switch op.Kind {
	case store.OpDeprovision:
		p.SucceededInstallStatus, p.FailedInstallStatus, p.InterruptedInstallStatus = status.InstallDeprovisioned, status.InstallFailed, status.InstallFailed
	default:
		p.SucceededInstallStatus, p.FailedInstallStatus, p.InterruptedInstallStatus = status.InstallActive, status.InstallFailed, status.InstallFailed
	}
	if op.Kind == store.OpDeployComponent || op.Kind == store.OpTeardownComponent || op.Kind == store.OpUpdateInputs ||
		op.Kind == store.OpDeployConfig || op.Kind == store.OpDriftCheck || op.Kind == store.OpReconcileDrift {
		// A component operation, an input update or a reconcile does not change what the install is; a
		// config deploy that ends well leaves it active, one denied or plan-only as it was.
		inst, err := a.Store.GetInstall(ctx, op.OrgID, op.InstallID)
		if err != nil {
			return contract.OperationPlan{}, err
		}
		p.SucceededInstallStatus, p.InterruptedInstallStatus = inst.Status, inst.Status
		if op.Kind == store.OpDeployConfig {
			p.SucceededInstallStatus = status.InstallActive
		}
		if op.Kind == store.OpDriftCheck { // a check changes nothing, not even when it fails
			p.FailedInstallStatus = inst.Status
			p.DriftReconcile = inst.DriftReconcile && inst.ApprovalMode == status.ApproveAll
		}
	}
	installStatus := status.InstallProvisioning
	if op.Kind == store.OpDeprovision {
		installStatus = status.InstallDeprovisioning
	}
	if op.Kind == store.OpProvision || op.Kind == store.OpReprovision || op.Kind == store.OpDeprovision {
		if err := a.Store.SetInstallStatus(ctx, op.InstallID, installStatus); err != nil {
			return contract.OperationPlan{}, err
		}
	}
	return p, nil
}

// WaitForRunner returns once the install's runner is online, showing the
// operation and install as waiting for it meanwhile; it fails clearly when
// the runner does not come within timeout.
func (a *Activities) WaitForRunner(ctx context.Context, opID string, timeout time.Duration) (_ contract.RunnerInfo, err error) {
	defer classified(&err)
	op, err := a.Store.GetOperationByID(ctx, opID)
	if err != nil {
		return contract.RunnerInfo{}, err
	}
	deadline := time.Now().Add(timeout)
	waiting := false
	runnerID := "unknown"
	for {
		r, info, online, err := a.runnerOf(ctx, op)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return contract.RunnerInfo{}, err
		case err != nil:
			// The database is away (a restart): wait on, as for the runner.
		default:
			runnerID = r.ID
		}
		if online {
			if waiting {
				a.Store.SetOperationStatus(ctx, opID, status.OpRunning)
			}
			return info, nil
		}
		if !waiting {
			waiting = true
			a.Store.SetOperationStatus(ctx, opID, status.OpWaitingForRunner)
			if op.Kind == store.OpProvision {
				a.Store.SetInstallStatus(ctx, op.InstallID, status.InstallWaitingForRunner)
			}
		}
		if time.Now().After(deadline) {
			return contract.RunnerInfo{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("the install's runner (%s) did not come online within %s: is it running, and can it reach the gateway?", runnerID, timeout),
				"RunnerOffline", nil)
		}
		activity.RecordHeartbeat(ctx)
		select {
		case <-ctx.Done():
			return contract.RunnerInfo{}, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// RunnerOnline is WaitForRunner's quick look, for a local activity: the
// install's runner, if it is online now (else Online is false, and nothing
// is recorded: WaitForRunner waits).
func (a *Activities) RunnerOnline(ctx context.Context, opID string) (_ contract.RunnerCheck, err error) {
	defer classified(&err)
	op, err := a.Store.GetOperationByID(ctx, opID)
	if err != nil {
		return contract.RunnerCheck{}, err
	}
	_, info, online, err := a.runnerOf(ctx, op)
	return contract.RunnerCheck{Online: online, Runner: info}, err
}

// runnerOf is the operation's install's runner, what it can do, and whether
// it is online (seen within the online window).
func (a *Activities) runnerOf(ctx context.Context, op store.InstallOperation) (store.Runner, contract.RunnerInfo, bool, error) {
	r, err := a.Store.GetInstallRunner(ctx, op.OrgID, op.InstallID)
	if err != nil {
		return r, contract.RunnerInfo{}, false, err
	}
	info := contract.RunnerInfo{DeferredInputs: slices.Contains(r.Capabilities, protocol.CapabilityDeferredInputs),
		ModuleSync: slices.Contains(r.Capabilities, protocol.CapabilityModuleSync)}
	return r, info, r.LastSeenAt != nil && time.Since(*r.LastSeenAt) < a.opConfig().OnlineWindow, nil
}

// SetStepStatus records a step's status (and error), stamping its times.
func (a *Activities) SetStepStatus(ctx context.Context, opID, step string, stepStatus status.Step, errMsg string) error {
	now := time.Now().UTC()
	change := store.StepChange{Status: &stepStatus, Error: &errMsg}
	if stepStatus == status.StepSucceeded || stepStatus == status.StepNoChanges {
		if err := a.recordAppliedRender(ctx, opID, step); err != nil {
			return classify(err)
		}
	}
	switch stepStatus {
	case status.StepPlanning:
		change.StartedAt = &now
	case status.StepSucceeded, status.StepNoChanges, status.StepFailed, status.StepSkipped, status.StepDenied,
		status.StepCancelled, status.StepPlanned, status.StepUnchanged, status.StepDrifted:
		change.FinishedAt = &now
	}
	return classify(a.Store.UpdateStep(ctx, opID, step, change))
}

// FinishOperation records the operation's end and frees the install.
func (a *Activities) FinishOperation(ctx context.Context, opID string, opStatus status.Op, errMsg string, installStatus status.Install) error {
	return classify(a.Store.FinishOperation(ctx, opID, opStatus, errMsg, installStatus))
}

// RecordPlan stores a plan job's result on its step.
func (a *Activities) RecordPlan(ctx context.Context, opID, step, jobID string) (_ contract.PlanSummary, err error) {
	defer classified(&err)
	var out protocol.TerraformPlanOutputs
	if failed, err := a.jobOutputs(ctx, opID, step, jobID, &out); err != nil || failed != "" {
		return contract.PlanSummary{Failed: failed != "", Error: failed}, err
	}
	return a.recordPlan(ctx, opID, step, out)
}

// RecordPlanApply stores a plan_apply job's result on its step: the plan,
// and, when it was applied, the step's outputs from the state it stored.
func (a *Activities) RecordPlanApply(ctx context.Context, opID, step, jobID string) (_ contract.PlanSummary, err error) {
	defer classified(&err)
	var out protocol.TerraformPlanApplyOutputs
	if failed, err := a.jobOutputs(ctx, opID, step, jobID, &out); err != nil || failed != "" {
		return contract.PlanSummary{Failed: failed != "", Error: failed}, err
	}
	if failed, err := a.checkSynced(ctx, opID, step, out.Synced); err != nil || failed != "" {
		return contract.PlanSummary{Failed: failed != "", Error: failed}, err
	}
	s, err := a.recordPlan(ctx, opID, step, out.Plan)
	switch {
	case err != nil || out.Plan.HasChanges && !out.Applied:
		return s, err
	case out.Applied:
		s.Applied = true
		return s, a.recordOutputs(ctx, opID, step)
	}
	return s, a.recordUnchangedOutputs(ctx, opID, step)
}

// recordUnchangedOutputs records a step's outputs from its state when its
// plan found nothing to do: an earlier attempt, lost after it applied (its
// completion never delivered), left them there unrecorded. A step with no
// state, or one that destroys, records nothing.
func (a *Activities) recordUnchangedOutputs(ctx context.Context, opID, step string) error {
	op, st, err := a.stepOf(ctx, opID, step)
	if err != nil || st.Destroy {
		return err
	}
	if err := a.saveStateOutputs(ctx, op, step); !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}

// jobOutputs decodes a finished job's outputs into v. A job that did not
// succeed gives its error message (recorded on the step, when opID names
// one), not an error.
func (a *Activities) jobOutputs(ctx context.Context, opID, step, jobID string, v any) (failed string, err error) {
	j, err := a.Store.GetJobOutcome(ctx, jobID)
	if err != nil {
		return "", err
	}
	if j.Status != status.JobSucceeded {
		msg := jobError(j)
		if opID == "" {
			return msg, nil
		}
		return msg, a.Store.UpdateStep(ctx, opID, step, store.StepChange{Error: &msg})
	}
	if v == nil {
		return "", nil
	}
	if err := json.Unmarshal([]byte(j.Outputs), v); err != nil {
		return "", temporal.NewNonRetryableApplicationError(fmt.Sprintf("outputs of job %s: %v", jobID, err), "BadOutputs", err)
	}
	return "", nil
}

// recordPlan stores a plan on its step. A plan without changes for a
// component's new build means the install now runs that build (nothing
// else is left to apply), so it is recorded as the component's build —
// except in a plan-only operation, which changes nothing.
func (a *Activities) recordPlan(ctx context.Context, opID, step string, out protocol.TerraformPlanOutputs) (contract.PlanSummary, error) {
	s := contract.PlanSummary{HasChanges: out.HasChanges, Add: out.Add, Change: out.Change, Destroy: out.Destroy}
	err := a.Store.UpdateStep(ctx, opID, step, store.StepChange{HasChanges: &out.HasChanges, Add: &out.Add,
		Change: &out.Change, Remove: &out.Destroy, PlanText: &out.PlanText})
	if err != nil || out.HasChanges || step == status.SandboxStep {
		return s, err
	}
	op, st, err := a.stepOf(ctx, opID, step)
	if err != nil || op.PlanOnly || st.Destroy {
		return s, err
	}
	return s, a.recordDeployedBuild(ctx, opID, op.InstallID, step)
}

// RecordApply records the step's outputs after its apply job.
func (a *Activities) RecordApply(ctx context.Context, opID, step, jobID string) (_ contract.ApplySummary, err error) {
	defer classified(&err)
	if failed, err := a.jobOutputs(ctx, opID, step, jobID, nil); err != nil || failed != "" {
		return contract.ApplySummary{Failed: failed != "", Error: failed}, err
	}
	return contract.ApplySummary{}, a.recordOutputs(ctx, opID, step)
}

// recordOutputs stores the outputs in the step's latest state as the
// install's outputs of the step — or, after a destroy, forgets them.
func (a *Activities) recordOutputs(ctx context.Context, opID, step string) error {
	op, st, err := a.stepOf(ctx, opID, step)
	if err != nil {
		return err
	}
	ws := Workspace(op.InstallID, step)
	if st.Destroy {
		// Nothing is left of it: forget its outputs and retire its state
		// (every version is kept for the record; a GET finds none).
		if err := a.Store.DeleteOutputs(ctx, op.InstallID, step); err != nil {
			return err
		}
		if err := a.Store.DeleteInstallComponent(ctx, op.InstallID, step); err != nil {
			return err
		}
		return a.Store.DiscardTerraformState(ctx, op.OrgID, ws)
	}
	if err := a.recordDeployedBuild(ctx, opID, op.InstallID, step); err != nil {
		return err
	}
	return a.saveStateOutputs(ctx, op, step)
}

// saveStateOutputs records the outputs in the step's terraform state as the
// install's (store.ErrNotFound when it has no state).
func (a *Activities) saveStateOutputs(ctx context.Context, op store.InstallOperation, step string) error {
	outputs, err := a.Store.TerraformStateOutputs(ctx, op.OrgID, Workspace(op.InstallID, step))
	if err != nil {
		return fmt.Errorf("outputs of %s: %w", step, err)
	}
	raw, err := json.Marshal(protocol.TerraformApplyOutputs{Outputs: outputs})
	if err != nil {
		return err
	}
	return a.Store.SaveOutputs(ctx, op.InstallID, step, string(raw))
}

// recordDeployedBuild records the build a component step deployed, and
// the config version it came from, as what the install's component runs.
func (a *Activities) recordDeployedBuild(ctx context.Context, opID, installID, step string) error {
	op, st, err := a.stepOf(ctx, opID, step)
	if err != nil || st.BuildID == nil {
		return err
	}
	ref, _, err := a.deployedArtifact(ctx, installID, step, st.BuildID)
	if err != nil || ref == nil {
		return err
	}
	return a.Store.SetInstallComponent(ctx, store.InstallComponent{InstallID: installID, Component: step, BuildID: *st.BuildID,
		Digest: ref.Digest, Reference: ref.Registry.Address + "/" + ref.Repository + "@" + ref.Digest, ConfigVersion: op.ConfigVersion})
}

// stepOf reads an operation and one of its steps (whether a step destroys
// is the step's: a deploy_config deploys some and tears others down).
func (a *Activities) stepOf(ctx context.Context, opID, step string) (store.InstallOperation, store.InstallStep, error) {
	op, err := a.Store.GetOperationByID(ctx, opID)
	if err != nil {
		return op, store.InstallStep{}, err
	}
	st, err := a.Store.GetStep(ctx, opID, step)
	return op, st, err
}

// enqueueStepJob queues a step's job on the install's runner (idempotent by
// spec.Key) and records it on the step: changes gives the step's new fields
// for the job's ID. spec names the job's type, timeout and state workspace;
// m is its manifest.
func (a *Activities) enqueueStepJob(ctx context.Context, op store.InstallOperation, step string, spec store.JobSpec, m any,
	change func(jobID string) store.StepChange) (contract.JobRef, error) {
	raw, err := manifest(m)
	if err != nil {
		return contract.JobRef{}, err
	}
	r, err := a.Store.GetInstallRunner(ctx, op.OrgID, op.InstallID)
	if err != nil {
		return contract.JobRef{}, err
	}
	spec.OrgID, spec.RunnerID, spec.InstallID, spec.Manifest = op.OrgID, r.ID, &op.InstallID, raw
	j, created, err := a.Store.EnqueueJob(ctx, spec)
	if err != nil {
		return contract.JobRef{}, err
	}
	if err := a.Store.UpdateStep(ctx, op.ID, step, change(j.ID)); err != nil {
		return contract.JobRef{}, err
	}
	return contract.JobRef{JobID: j.ID, Created: created}, nil
}

func nonEmptyObject(s string) string {
	if s == "" {
		return "{}"
	}
	return s
}

// jobError is the message of a job that did not succeed.
func jobError(j store.Job) string {
	switch {
	case j.Error != "":
		return j.Error
	case j.Status == status.JobCancelled:
		return "cancelled"
	case j.ExitCode != nil:
		return fmt.Sprintf("exited with code %d", *j.ExitCode)
	}
	return string(j.Status)
}
