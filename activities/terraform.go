package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/internal/attemptcred"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// terraformJobTimeout bounds one terraform run on the runner.
const terraformJobTimeout = 30 * time.Minute

// installConfig loads the app config version an operation runs. A version
// never changes once synced, so each is read and parsed once per worker.
func (a *Activities) installConfig(ctx context.Context, orgID, appID string, version int) (*appconfig.Config, int, error) {
	if cfg, ok := a.configs.get(orgID, appID, version); ok {
		return cfg, version, nil
	}
	var (
		ac  store.AppConfig
		err error
	)
	if version > 0 {
		ac, err = a.Store.GetAppConfig(ctx, orgID, appID, version)
	} else {
		ac, err = a.Store.LatestAppConfig(ctx, orgID, appID)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("app config: %w", err)
	}
	archive, err := ac.Archive()
	if err != nil {
		return nil, 0, invalidConfig(fmt.Errorf("app config version %d: %w", ac.Version, err))
	}
	cfg, err := appconfig.FromArchive(archive)
	if err != nil {
		return nil, 0, invalidConfig(fmt.Errorf("app config version %d: %w", ac.Version, err))
	}
	a.configs.put(orgID, appID, ac.Version, cfg)
	return cfg, ac.Version, nil
}

// configCache holds parsed app config versions, which are read-only once
// parsed. It forgets them all when full: a worker runs few versions at once.
type configCache struct {
	mu      sync.Mutex
	entries map[string]*appconfig.Config
}

const configCacheSize = 64

func configKey(orgID, appID string, version int) string {
	return orgID + "/" + appID + "/" + strconv.Itoa(version)
}

func (c *configCache) get(orgID, appID string, version int) (*appconfig.Config, bool) {
	if version <= 0 {
		return nil, false // "the latest": not a version yet
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	cfg, ok := c.entries[configKey(orgID, appID, version)]
	return cfg, ok
}

func (c *configCache) put(orgID, appID string, version int, cfg *appconfig.Config) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= configCacheSize {
		c.entries = map[string]*appconfig.Config{}
	}
	c.entries[configKey(orgID, appID, version)] = cfg
}

// Workspace is the terraform state workspace of an install's step.
func Workspace(installID, step string) string {
	if step == status.SandboxStep {
		return installID + ".sandbox"
	}
	return installID + ".component." + step
}

// renderData gathers what templates may read: the install's inputs and the
// outputs its sandbox and components have now.
func (a *Activities) renderData(ctx context.Context, cfg *appconfig.Config, inst store.Install) (appconfig.Data, error) {
	given, sensitive := map[string]string{}, map[string]bool{}
	for _, in := range inst.Inputs {
		given[in.Name] = in.Value
		sensitive[in.Name] = in.Sensitive
	}
	inputs, err := cfg.ResolveInputs(given, sensitive)
	if err != nil {
		return appconfig.Data{}, nonRetryable("render", err)
	}
	d := appconfig.Data{InstallID: inst.ID, InstallName: inst.Name, Inputs: inputs,
		SandboxOutputs: map[string]appconfig.Value{}, Components: map[string]map[string]appconfig.Value{}}
	rows, err := a.Store.ListOutputs(ctx, inst.ID)
	if err != nil {
		return appconfig.Data{}, err
	}
	for name, raw := range rows {
		var o protocol.TerraformApplyOutputs
		if err := json.Unmarshal([]byte(raw), &o); err != nil {
			return appconfig.Data{}, nonRetryable("render", fmt.Errorf("outputs of %s: %w", name, err))
		}
		vals, err := appconfig.OutputValues(o.Outputs)
		if err != nil {
			return appconfig.Data{}, nonRetryable("render", err)
		}
		if name == status.SandboxStep {
			d.SandboxOutputs = vals
		} else {
			d.Components[name] = vals
		}
	}
	return d, nil
}

// EnqueueTerraformJob renders a step's terraform job — variables and env
// from templates over inputs and outputs, the module archive, a state
// credential valid for this job only — and queues it on the install's
// runner. Idempotent by key.
func (a *Activities) EnqueueTerraformJob(ctx context.Context, in contract.TerraformJobInput) (_ contract.JobRef, err error) {
	defer classified(&err)
	oc, data, err := a.loadStep(ctx, in.OperationID, in.Step)
	if err != nil {
		return contract.JobRef{}, err
	}
	op, cfg := oc.op, oc.cfg
	var rendered *appconfig.Rendered
	source := cfg.Sandbox.Source
	switch {
	case in.Step == status.SandboxStep && in.DeferInputs:
		return contract.JobRef{}, temporal.NewNonRetryableApplicationError("the sandbox's inputs cannot be deferred", "InvalidInput", nil)
	case in.Step == status.SandboxStep:
		rendered, err = cfg.RenderSandbox(data)
	default:
		c, ok := cfg.Component(in.Step)
		if !ok || c.Terraform == nil {
			return contract.JobRef{}, temporal.NewNonRetryableApplicationError("no terraform component "+in.Step+" in the app config", "InvalidConfig", nil)
		}
		source = c.Terraform.Source
		if in.DeferInputs {
			rendered, err = cfg.RenderComponentEnv(in.Step, data)
		} else {
			rendered, err = cfg.RenderComponent(in.Step, data)
		}
	}
	if err != nil {
		return contract.JobRef{}, nonRetryable("render "+in.Step, err)
	}
	// A component's module comes from the install's registry (see deployedArtifact);
	// the sandbox's, and one deployed before builds existed, travel in the manifest.
	var (
		artifact *protocol.ArtifactRef
		modSync  *protocol.TerraformModuleSync
	)
	switch {
	case in.SyncBuildID != "" && (in.Operation != protocol.TerraformPlanApply || in.Step == status.SandboxStep):
		return contract.JobRef{}, temporal.NewNonRetryableApplicationError("SyncBuildID: only a component's plan_apply job syncs its build", "InvalidInput", nil)
	case in.DeferRegistry && (!in.DeferInputs || in.SyncBuildID == ""):
		return contract.JobRef{}, temporal.NewNonRetryableApplicationError("DeferRegistry: only a job that syncs its build (SyncBuildID) with deferred inputs defers the registry", "InvalidInput", nil)
	case in.SyncBuildID != "":
		src, dst, err := a.syncEnds(ctx, op.InstallID, in.SyncBuildID, !in.DeferRegistry)
		if err != nil {
			return contract.JobRef{}, err
		}
		modSync = &protocol.TerraformModuleSync{Source: src, Destination: dst}
	case in.Step != status.SandboxStep:
		st, err := a.Store.GetStep(ctx, in.OperationID, in.Step)
		if err != nil {
			return contract.JobRef{}, err
		}
		if artifact, _, err = a.deployedArtifact(ctx, op.InstallID, in.Step, st.BuildID); err != nil {
			return contract.JobRef{}, err
		}
	}
	var module []byte
	if artifact == nil && modSync == nil {
		if module, err = cfg.ModuleArchive(source); err != nil {
			return contract.JobRef{}, err
		}
	}
	ws := Workspace(op.InstallID, in.Step)
	key, err := a.Store.RegistryKey(ctx) // signs the state credential's placeholder
	if err != nil {
		return contract.JobRef{}, err
	}
	gw := strings.TrimRight(a.opConfig().GatewayURL, "/")
	if gw == "" {
		return contract.JobRef{}, temporal.NewNonRetryableApplicationError("the worker has no gateway URL configured (the terraform state backend)", "Config", nil)
	}
	stateURL := gw + strings.ReplaceAll(protocol.PathState, "{workspace}", ws)
	lockURL := gw + strings.ReplaceAll(protocol.PathLock, "{workspace}", ws)
	vars, env := variablesFromEnv(rendered.Variables, rendered.EnvVars)
	m := protocol.TerraformManifest{Operation: in.Operation, Destroy: in.Destroy, Workspace: ws, Module: module, ModuleArtifact: artifact,
		ModuleSync: modSync, Variables: vars, Env: env, NoLock: in.NoLock,
		Backend: protocol.TerraformBackend{Address: stateURL, LockAddress: lockURL, UnlockAddress: lockURL, Password: attemptcred.State(key, op.OrgID)}}
	change := &store.StepChange{Status: new(status.StepPlanning), StartedAt: new(time.Now().UTC()),
		RenderDigest: new(terraformDigest(rendered, sourceDigest(cfg, in.Step)))}
	if in.Operation == protocol.TerraformApply {
		plan, err := a.Store.GetJobByID(ctx, in.PlanJobID)
		if err != nil {
			return contract.JobRef{}, err
		}
		var po protocol.TerraformPlanOutputs
		if err := json.Unmarshal([]byte(plan.Outputs), &po); err != nil || len(po.PlanFile) == 0 {
			return contract.JobRef{}, temporal.NewNonRetryableApplicationError("the plan job "+plan.ID+" left no saved plan", "NoPlan", err)
		}
		// The saved plan already says whether it destroys.
		m.PlanFile, m.Destroy = po.PlanFile, false
		change = &store.StepChange{Status: new(status.StepApplying)}
	}
	spec := store.JobSpec{Key: in.Key, Type: protocol.JobTypeTerraform, TimeoutMS: terraformJobTimeout.Milliseconds(),
		Workspace: ws}
	if in.DeferInputs {
		if in.Operation != protocol.TerraformPlan && in.Operation != protocol.TerraformPlanApply {
			return contract.JobRef{}, temporal.NewNonRetryableApplicationError("only a plan takes variables, not a "+in.Operation, "InvalidInput", nil)
		}
		m.Variables, spec.InputsDeferred = nil, true
		// A safety net for an operation that ends without giving them (a
		// terminated workflow): its dependencies' jobs get JobWait each,
		// and a job queued two steps ahead waits for two of them.
		spec.InputsWaitMS = (3 * a.opConfig().JobWait).Milliseconds()
		if in.DeferRegistry {
			spec.InputsWaitMS += a.opConfig().JobWait.Milliseconds() // and the sandbox's job
		}
		// The step is not started yet: ProvideTerraformInputs starts it.
		change = nil
	}
	return a.enqueueStepJob(ctx, op, in.Step, spec, m, func(jobID string) store.StepChange {
		if change == nil {
			return store.StepChange{}
		}
		return stepJobChange(*change, in, jobID)
	})
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
func (a *Activities) ProvideTerraformInputs(ctx context.Context, in contract.TerraformJobInput, jobID string) (err error) {
	defer classified(&err)
	oc, data, err := a.loadStep(ctx, in.OperationID, in.Step)
	if err != nil {
		return err
	}
	rendered, err := oc.cfg.RenderComponent(in.Step, data)
	if err != nil {
		return nonRetryable("render "+in.Step, err)
	}
	vars, _ := variablesFromEnv(rendered.Variables, rendered.EnvVars)
	inputs := protocol.TerraformInputs{Variables: vars}
	if in.DeferRegistry {
		reg, err := a.installRegistry(ctx, oc.op.InstallID)
		if err != nil {
			return err
		}
		inputs.Registry = &reg
	}
	raw, err := json.Marshal(inputs)
	if err != nil {
		return err
	}
	if err := a.Store.ProvideJobInputs(ctx, jobID, raw); err != nil {
		return err
	}
	change := stepJobChange(store.StepChange{Status: new(status.StepPlanning), StartedAt: new(time.Now().UTC()),
		RenderDigest: new(terraformDigest(rendered, ""))}, in, jobID)
	return a.Store.UpdateStep(ctx, in.OperationID, in.Step, change)
}

// operationContext is an operation with its install and the app config
// version it runs.
type operationContext struct {
	op      store.InstallOperation
	inst    store.Install
	cfg     *appconfig.Config
	version int
}

// loadOperation loads an operation, its install and the config version it
// runs for step ("": the operation's): a component the operation's version
// does not have (one a deploy_config tears down) is read from the version
// it was deployed from.
func (a *Activities) loadOperation(ctx context.Context, opID, step string) (operationContext, error) {
	op, err := a.Store.GetOperationByID(ctx, opID)
	if err != nil {
		return operationContext{}, err
	}
	inst, err := a.Store.GetInstallByID(ctx, op.InstallID)
	if err != nil {
		return operationContext{}, err
	}
	cfg, version, err := a.installConfig(ctx, op.OrgID, inst.AppID, op.ConfigVersion)
	if err != nil {
		return operationContext{}, err
	}
	if _, ok := cfg.Component(step); ok || step == "" || step == status.SandboxStep {
		return operationContext{op: op, inst: inst, cfg: cfg, version: version}, nil
	}
	deployed, err := a.deployedVersion(ctx, inst, step)
	if err != nil {
		return operationContext{}, err
	}
	cfg, version, err = a.installConfig(ctx, op.OrgID, inst.AppID, deployed)
	return operationContext{op: op, inst: inst, cfg: cfg, version: version}, err
}

// loadStep is loadOperation, with what templates may read now.
func (a *Activities) loadStep(ctx context.Context, opID, step string) (operationContext, appconfig.Data, error) {
	oc, err := a.loadOperation(ctx, opID, step)
	if err != nil {
		return operationContext{}, appconfig.Data{}, err
	}
	data, err := a.renderData(ctx, oc.cfg, oc.inst)
	if err != nil {
		return operationContext{}, appconfig.Data{}, err
	}
	return oc, data, nil
}

// variablesFromEnv moves TF_VAR_<name> environment variables into the
// variables (terraform-exec passes variables itself and refuses them in the
// environment). A variable set directly wins, as it would in terraform.
func variablesFromEnv(vars map[string]json.RawMessage, env map[string]string) (map[string]json.RawMessage, map[string]string) {
	outVars := map[string]json.RawMessage{}
	for k, v := range vars {
		outVars[k] = v
	}
	outEnv := map[string]string{}
	for k, v := range env {
		name, ok := strings.CutPrefix(k, "TF_VAR_")
		if !ok {
			outEnv[k] = v
			continue
		}
		if _, set := outVars[name]; !set {
			b, _ := json.Marshal(v)
			outVars[name] = b
		}
	}
	return outVars, outEnv
}
