package activities

import (
	"context"
	"fmt"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/jobmanifest"
	"github.com/outpost-dev/outpost/store"
)

// renderStore is what rendering reads of the store.
type renderStore interface {
	GetAppConfig(ctx context.Context, orgID, appID string, version int) (store.AppConfig, error)
	LatestAppConfig(ctx context.Context, orgID, appID string) (store.AppConfig, error)
	GetOperationByID(ctx context.Context, opID string) (store.InstallOperation, error)
	GetInstallByID(ctx context.Context, id string) (store.Install, error)
	ListOutputs(ctx context.Context, installID string) (map[string]string, error)
	ListInstallComponents(ctx context.Context, installID string) ([]store.InstallComponent, error)
	GetBuildByID(ctx context.Context, buildID string) (store.Build, error)
	LatestActionOutputs(ctx context.Context, installID string, actions []string) (map[string]store.ActionOutputs, error)
}

// renderer loads what a job is rendered from: the app config version an
// operation runs (parsed once per worker: a version never changes), and
// what templates read (the install's inputs and outputs). The activities
// that render share one.
type renderer struct {
	store   renderStore
	configs configCache
}

// operationContext is an operation with its install and the app config
// version it runs.
type operationContext struct {
	op      store.InstallOperation
	inst    store.Install
	cfg     *appconfig.Config
	version int
}

// installConfig loads an app config version (0: the latest).
func (r *renderer) installConfig(ctx context.Context, orgID, appID string, version int) (*appconfig.Config, int, error) {
	if cfg, ok := r.configs.get(orgID, appID, version); ok {
		return cfg, version, nil
	}
	var (
		ac  store.AppConfig
		err error
	)
	if version > 0 {
		ac, err = r.store.GetAppConfig(ctx, orgID, appID, version)
	} else {
		ac, err = r.store.LatestAppConfig(ctx, orgID, appID)
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
	r.configs.put(orgID, appID, ac.Version, cfg)
	return cfg, ac.Version, nil
}

// installAt loads an install and its app's config version (0: the latest),
// and says which version that is.
func (r *renderer) installAt(ctx context.Context, installID string, version int) (store.Install, *appconfig.Config, int, error) {
	inst, err := r.store.GetInstallByID(ctx, installID)
	if err != nil {
		return store.Install{}, nil, 0, err
	}
	cfg, v, err := r.installConfig(ctx, inst.OrgID, inst.AppID, version)
	return inst, cfg, v, err
}

// loadOperation loads an operation, its install and the config version it
// runs for step ("": the operation's): a component the operation's version
// does not have (one a deploy_config tears down) is read from the version
// it was deployed from.
func (r *renderer) loadOperation(ctx context.Context, opID, step string) (operationContext, error) {
	op, err := r.store.GetOperationByID(ctx, opID)
	if err != nil {
		return operationContext{}, err
	}
	inst, cfg, version, err := r.installAt(ctx, op.InstallID, op.ConfigVersion)
	if err != nil {
		return operationContext{}, err
	}
	if _, ok := cfg.Component(step); ok || step == "" || step == status.SandboxStep {
		return operationContext{op: op, inst: inst, cfg: cfg, version: version}, nil
	}
	deployed, err := r.deployedVersion(ctx, inst, step)
	if err != nil {
		return operationContext{}, err
	}
	cfg, version, err = r.installConfig(ctx, op.OrgID, inst.AppID, deployed)
	return operationContext{op: op, inst: inst, cfg: cfg, version: version}, err
}

// loadStep is loadOperation, with what templates may read now.
func (r *renderer) loadStep(ctx context.Context, opID, step string) (operationContext, appconfig.Data, error) {
	oc, err := r.loadOperation(ctx, opID, step)
	if err != nil {
		return operationContext{}, appconfig.Data{}, err
	}
	data, err := r.renderData(ctx, oc.cfg, oc.inst)
	if err != nil {
		return operationContext{}, appconfig.Data{}, err
	}
	return oc, data, nil
}

// installData loads an install, the config version it runs and what its
// templates read (its inputs and outputs, with their sensitivity).
func (r *renderer) installData(ctx context.Context, installID string) (store.Install, *appconfig.Config, appconfig.Data, error) {
	inst, err := r.store.GetInstallByID(ctx, installID)
	if err != nil {
		return store.Install{}, nil, appconfig.Data{}, err
	}
	cfg, _, err := r.installConfig(ctx, inst.OrgID, inst.AppID, inst.ConfigVersion)
	if err != nil {
		return store.Install{}, nil, appconfig.Data{}, err
	}
	data, err := r.renderData(ctx, cfg, inst)
	return inst, cfg, data, err
}

// renderData gathers what templates may read: the install's inputs, the
// outputs its sandbox and components have now, and those of the latest
// succeeded run of each action the templates read.
func (r *renderer) renderData(ctx context.Context, cfg *appconfig.Config, inst store.Install) (appconfig.Data, error) {
	given, sensitive := map[string]string{}, map[string]bool{}
	for _, in := range inst.Inputs {
		given[in.Name] = in.Value
		sensitive[in.Name] = in.Sensitive
	}
	rows, err := r.store.ListOutputs(ctx, inst.ID)
	if err != nil {
		return appconfig.Data{}, err
	}
	d, err := jobmanifest.Data(cfg, jobmanifest.Install{ID: inst.ID, Name: inst.Name, Inputs: given, Sensitive: sensitive}, rows)
	if err != nil {
		return appconfig.Data{}, manifestError(err)
	}
	d.Actions, err = r.actionOutputs(ctx, cfg, inst.ID)
	return d, err
}

// actionOutputs reads the outputs of the install's latest succeeded run of
// each action cfg's templates read; the sealed ones are sensitive.
func (r *renderer) actionOutputs(ctx context.Context, cfg *appconfig.Config, installID string) (map[string]appconfig.ActionOutputs, error) {
	names := cfg.ActionsRead()
	if len(names) == 0 {
		return nil, nil
	}
	runs, err := r.store.LatestActionOutputs(ctx, installID, names)
	if err != nil {
		return nil, err
	}
	out := make(map[string]appconfig.ActionOutputs, len(runs))
	for name, ao := range runs {
		vals := make(map[string]appconfig.Value, len(ao.Outputs)+len(ao.SensitiveOutputs))
		for k, v := range ao.Outputs {
			vals[k] = appconfig.Value{Value: v}
		}
		for k, v := range ao.SensitiveOutputs {
			vals[k] = appconfig.Value{Value: v, Sensitive: true}
		}
		out[name] = appconfig.ActionOutputs{RunID: ao.RunID, Outputs: vals}
	}
	return out, nil
}

// deployedVersion is the config version the install's component was
// deployed from.
func (r *renderer) deployedVersion(ctx context.Context, inst store.Install, component string) (int, error) {
	running, err := r.store.ListInstallComponents(ctx, inst.ID)
	if err != nil {
		return 0, err
	}
	for _, ic := range running {
		if ic.Component == component {
			return r.componentVersion(ctx, ic)
		}
	}
	return 0, fmt.Errorf("component %s: not in the operation's config version, and the install does not run it: %w", component, store.ErrNotFound)
}

// componentVersion is the config version an install component was deployed
// from; for one recorded before that was, the version that queued its build
// (which has the component with that source).
func (r *renderer) componentVersion(ctx context.Context, ic store.InstallComponent) (int, error) {
	if ic.ConfigVersion > 0 {
		return ic.ConfigVersion, nil
	}
	b, err := r.store.GetBuildByID(ctx, ic.BuildID)
	return b.ConfigVersion, err
}
