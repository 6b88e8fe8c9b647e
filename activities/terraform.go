package activities

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/internal/attemptcred"
	"github.com/outpost-dev/outpost/jobmanifest"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// terraformJobTimeout bounds one terraform run on the runner.
const terraformJobTimeout = 30 * time.Minute

// terraformStore is what the terraform activities read and write of the
// store beyond the helpers'.
type terraformStore interface {
	GetStep(ctx context.Context, opID, name string) (store.InstallStep, error)
	UpdateStep(ctx context.Context, opID, name string, change store.StepChange) error
	GetJobByID(ctx context.Context, jobID string) (store.Job, error)
	ProvideJobInputs(ctx context.Context, jobID string, inputs json.RawMessage) error
	SigningKey(ctx context.Context, owner string) (store.SigningKey, error)
	TerraformStateOutputs(ctx context.Context, orgID, workspace string) (map[string]protocol.TerraformOutput, error)
	DiscardTerraformState(ctx context.Context, orgID, workspace string) error
	SaveOutputs(ctx context.Context, installID, name, outputs string) error
}

// Terraform are the activities of a terraform step (the sandbox, a
// terraform_module component): its plan, apply and plan_apply jobs, and
// what they recorded.
type Terraform struct {
	store     terraformStore
	render    *renderer
	steps     *stepJobs
	installed *installed
	artifacts *artifacts
	cfg       OperationConfig
}

// EnqueueTerraformJob renders a step's terraform job — variables and env
// from templates over inputs and outputs, the module archive, a state
// credential valid for this job only — and queues it on the install's
// runner. Idempotent by key.
func (a *Terraform) EnqueueTerraformJob(ctx context.Context, in contract.TerraformJobInput) (contract.JobRef, error) {
	oc, data, err := a.render.loadStep(ctx, in.OperationID, in.Step)
	if err != nil {
		return contract.JobRef{}, err
	}
	rendered, source, err := jobmanifest.Terraform(oc.cfg, data, in.Step, in.DeferInputs)
	if err != nil {
		return contract.JobRef{}, manifestError(err)
	}
	m := protocol.TerraformManifest{Operation: in.Operation, Destroy: in.Destroy, Workspace: Workspace(oc.op.InstallID, in.Step), NoLock: in.NoLock}
	if err := a.module(ctx, oc, in, source, &m); err != nil {
		return contract.JobRef{}, err
	}
	if m.Backend, err = a.backend(ctx, oc.op.OrgID, m.Workspace); err != nil {
		return contract.JobRef{}, err
	}
	m.Variables, m.Env = jobmanifest.Variables(rendered.Variables, rendered.EnvVars)
	m.Scrub = jobmanifest.Scrub(data, rendered)
	if in.Operation != protocol.TerraformOutputs {
		m.Policies = a.render.planPolicies(ctx, oc, in.Step)
	}
	change := &store.StepChange{Status: new(status.StepPlanning), StartedAt: new(time.Now().UTC()),
		RenderDigest: new(terraformDigest(rendered, sourceDigest(oc.cfg, in.Step)))}
	if in.Operation == protocol.TerraformApply {
		if err := a.planFile(ctx, in.PlanJobID, &m); err != nil {
			return contract.JobRef{}, err
		}
		change = &store.StepChange{Status: new(status.StepApplying)}
	}
	spec := store.JobSpec{Key: in.Key, Type: protocol.JobTypeTerraform, TimeoutMS: terraformJobTimeout.Milliseconds(), Workspace: m.Workspace}
	if in.DeferInputs {
		if err := a.deferInputs(in, &m, &spec); err != nil {
			return contract.JobRef{}, err
		}
		change = nil // the step is not started yet: ProvideTerraformInputs starts it
	}
	return a.steps.enqueue(ctx, oc.op, in.Step, spec, m, func(jobID string) store.StepChange {
		if change == nil {
			return store.StepChange{}
		}
		return stepJobChange(*change, in, jobID)
	})
}

// module sets where the job's module comes from. A component's comes from
// the install's registry (installed.deployedArtifact), copied there by the
// job itself when it syncs its build; the sandbox's, and one deployed
// before builds existed, travel in the manifest.
func (a *Terraform) module(ctx context.Context, oc operationContext, in contract.TerraformJobInput, source string, m *protocol.TerraformManifest) error {
	switch {
	case in.SyncBuildID != "" && (in.Operation != protocol.TerraformPlanApply || in.Step == status.SandboxStep):
		return temporal.NewNonRetryableApplicationError("SyncBuildID: only a component's plan_apply job syncs its build", "InvalidInput", nil)
	case in.DeferRegistry && (!in.DeferInputs || in.SyncBuildID == ""):
		return temporal.NewNonRetryableApplicationError("DeferRegistry: only a job that syncs its build (SyncBuildID) with deferred inputs defers the registry", "InvalidInput", nil)
	case in.SyncBuildID != "":
		src, dst, err := a.artifacts.syncEnds(ctx, oc.op.InstallID, in.SyncBuildID, !in.DeferRegistry)
		if err != nil {
			return err
		}
		m.ModuleSync = &protocol.TerraformModuleSync{Source: src, Destination: dst}
		return nil
	case in.Step != status.SandboxStep:
		st, err := a.store.GetStep(ctx, in.OperationID, in.Step)
		if err != nil {
			return err
		}
		if m.ModuleArtifact, _, err = a.installed.deployedArtifact(ctx, oc.op.InstallID, in.Step, st.BuildID); err != nil || m.ModuleArtifact != nil {
			return err
		}
	}
	var err error
	m.Module, err = oc.cfg.ModuleArchive(source)
	return err
}

// backend is the terraform state backend of a workspace: the gateway's,
// with a credential placeholder the gateway fills per attempt.
func (a *Terraform) backend(ctx context.Context, orgID, ws string) (protocol.TerraformBackend, error) {
	key, err := a.store.SigningKey(ctx, orgID) // signs the state credential's placeholder
	if err != nil {
		return protocol.TerraformBackend{}, err
	}
	gw := strings.TrimRight(a.cfg.GatewayURL, "/")
	if gw == "" {
		return protocol.TerraformBackend{}, temporal.NewNonRetryableApplicationError("the worker has no gateway URL configured (the terraform state backend)", "Config", nil)
	}
	lockURL := gw + strings.ReplaceAll(protocol.PathLock, "{workspace}", ws)
	return protocol.TerraformBackend{Address: gw + strings.ReplaceAll(protocol.PathState, "{workspace}", ws),
		LockAddress: lockURL, UnlockAddress: lockURL, Password: attemptcred.State(key, orgID)}, nil
}

// planFile has an apply job apply exactly the plan its plan job saved
// (which already says whether it destroys).
func (a *Terraform) planFile(ctx context.Context, planJobID string, m *protocol.TerraformManifest) error {
	plan, err := a.store.GetJobByID(ctx, planJobID)
	if err != nil {
		return err
	}
	var po protocol.TerraformPlanOutputs
	if err := json.Unmarshal([]byte(plan.Outputs), &po); err != nil || len(po.PlanFile) == 0 {
		return temporal.NewNonRetryableApplicationError("the plan job "+plan.ID+" left no saved plan", "NoPlan", err)
	}
	m.PlanFile, m.Destroy = po.PlanFile, false
	return nil
}

// deferInputs queues the job without its variables: ProvideTerraformInputs
// gives them once the step's dependencies are done.
func (a *Terraform) deferInputs(in contract.TerraformJobInput, m *protocol.TerraformManifest, spec *store.JobSpec) error {
	if in.Operation != protocol.TerraformPlan && in.Operation != protocol.TerraformPlanApply {
		return temporal.NewNonRetryableApplicationError("only a plan takes variables, not a "+in.Operation, "InvalidInput", nil)
	}
	m.Variables, spec.InputsDeferred = nil, true
	// A safety net for an operation that ends without giving them (a
	// terminated workflow): its dependencies' jobs get JobWait each,
	// and a job queued two steps ahead waits for two of them.
	spec.InputsWaitMS = (3 * a.cfg.JobWait).Milliseconds()
	if in.DeferRegistry {
		spec.InputsWaitMS += a.cfg.JobWait.Milliseconds() // and the sandbox's job
	}
	return nil
}

// stepJobChange adds, to a step's change, the job that plans or applies
// it (and syncs its build).
func stepJobChange(change store.StepChange, in contract.TerraformJobInput, jobID string) store.StepChange {
	if in.SyncBuildID != "" {
		change.SyncJobID = &jobID
	}
	switch in.Operation {
	case protocol.TerraformApply:
		change.ApplyJobID = &jobID
	case protocol.TerraformPlanApply:
		// One job plans and applies: it is both.
		change.PlanJobID, change.ApplyJobID = &jobID, &jobID
	default:
		change.PlanJobID = &jobID
	}
	return change
}

// ProvideTerraformInputs renders the variables of a step whose job was
// queued with DeferInputs, now that its dependencies are done, and gives
// them to the job. The step starts now. Idempotent.
func (a *Terraform) ProvideTerraformInputs(ctx context.Context, in contract.TerraformJobInput, jobID string) error {
	oc, data, err := a.render.loadStep(ctx, in.OperationID, in.Step)
	if err != nil {
		return err
	}
	rendered, err := oc.cfg.RenderComponent(in.Step, data)
	if err != nil {
		return nonRetryable("render "+in.Step, err)
	}
	vars, _ := jobmanifest.Variables(rendered.Variables, rendered.EnvVars)
	inputs := protocol.TerraformInputs{Variables: vars, Scrub: jobmanifest.Scrub(data, rendered)}
	if in.DeferRegistry {
		reg, err := a.render.installRegistry(ctx, oc.op.InstallID)
		if err != nil {
			return err
		}
		inputs.Registry = &reg
	}
	raw, err := json.Marshal(inputs)
	if err != nil {
		return err
	}
	if err := a.store.ProvideJobInputs(ctx, jobID, raw); err != nil {
		return err
	}
	change := stepJobChange(store.StepChange{Status: new(status.StepPlanning), StartedAt: new(time.Now().UTC()),
		RenderDigest: new(terraformDigest(rendered, ""))}, in, jobID)
	return a.store.UpdateStep(ctx, in.OperationID, in.Step, change)
}
