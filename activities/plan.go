package activities

import (
	"context"
	"fmt"
	"slices"

	"go.temporal.io/sdk/temporal"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// graphNode is a component, as the planner sees it.
type graphNode struct {
	Name string
	Type string
	// EnvReadsComponents: its environment reads other components' outputs
	// (appconfig.Config.EnvReadsComponents).
	EnvReadsComponents bool
	// EnvReadsSandbox: its environment reads the sandbox's outputs
	// (appconfig.Config.EnvReadsSandbox).
	EnvReadsSandbox bool
}

// installGraph is the app config an operation runs.
type installGraph struct {
	Version    int
	Deps       appconfig.Graph
	Components []graphNode // in deployment order (Deps.Order)
}

// planSteps builds the steps of an operation from the config's graph: the
// sandbox first (last when destroying), components after their dependencies
// (before them when destroying).
func planSteps(op store.InstallOperation, g installGraph) ([]contract.StepSpec, error) {
	selected, err := selectComponents(op, g)
	if err != nil {
		return nil, err
	}
	destroy := op.Kind == store.OpDeprovision || op.Kind == store.OpTeardownComponent
	withSandbox := op.Kind == store.OpProvision || op.Kind == store.OpReprovision || op.Kind == store.OpDeprovision ||
		op.Kind == store.OpUpdateInputs || op.Kind == store.OpDeployConfig || op.Kind == store.OpDriftCheck ||
		op.Kind == store.OpReconcileDrift
	dependents := g.Deps.Reverse()
	var steps []contract.StepSpec
	var names []string
	for _, c := range g.Components {
		if !selected[c.Name] {
			continue
		}
		names = append(names, c.Name)
		var after []string
		if !destroy {
			after = selectedOf(g.Deps[c.Name], selected)
			if withSandbox {
				after = append(after, status.SandboxStep)
			}
		} else {
			// Destroy a component only after everything that depends on
			// it, in deployment order.
			for _, o := range g.Components {
				if selected[o.Name] && slices.Contains(dependents[c.Name], o.Name) {
					after = append(after, o.Name)
				}
			}
		}
		// An input update, a config deploy or a reconcile decides whether a step runs once what it
		// waits for has ended: none starts early.
		early := op.Kind != store.OpUpdateInputs && op.Kind != store.OpDeployConfig && op.Kind != store.OpReconcileDrift
		prestart := early && op.ApprovalMode != status.Prompt && !op.PlanOnly && c.Type == contract.TypeTerraformModule && !c.EnvReadsComponents
		steps = append(steps, contract.StepSpec{Name: c.Name, After: after, Destroy: destroy, Type: c.Type, Prestart: prestart,
			PrestartBeforeSandbox: prestart && !c.EnvReadsSandbox})
	}
	if withSandbox {
		sb := contract.StepSpec{Name: status.SandboxStep, Destroy: destroy}
		if destroy {
			sb.After = names
			steps = append(steps, sb)
		} else {
			steps = append([]contract.StepSpec{sb}, steps...)
		}
	}
	return steps, nil
}

// selectComponents are the components an operation touches: all of them,
// or one (and, if asked, everything that depends on it).
func selectComponents(op store.InstallOperation, g installGraph) (map[string]bool, error) {
	selected := map[string]bool{}
	switch op.Kind {
	case store.OpDeployComponent, store.OpTeardownComponent:
		if _, ok := g.Deps[op.Component]; !ok {
			return nil, fmt.Errorf("the app config (version %d) has no component %q", g.Version, op.Component)
		}
		selected[op.Component] = true
		if op.WithDependents {
			for _, d := range g.Deps.Dependents(op.Component) {
				selected[d] = true
			}
		}
	default:
		for name := range g.Deps {
			selected[name] = true
		}
	}
	return selected, nil
}

// selectedOf is the names that are selected, in their order.
func selectedOf(names []string, selected map[string]bool) []string {
	var out []string
	for _, n := range names {
		if selected[n] {
			out = append(out, n)
		}
	}
	return out
}

// planStore is what planning an operation reads of the store beyond the
// renderer's.
type planStore interface {
	GetInstallByID(ctx context.Context, id string) (store.Install, error)
	GetOperation(ctx context.Context, orgID, opID string) (store.InstallOperation, error)
	GetOperationByID(ctx context.Context, opID string) (store.InstallOperation, error)
	GetBuildByID(ctx context.Context, buildID string) (store.Build, error)
	ListInstallComponents(ctx context.Context, installID string) ([]store.InstallComponent, error)
	AppliedRenders(ctx context.Context, installID string) (map[string]string, error)
	ListDrift(ctx context.Context, installID string) ([]store.InstallDrift, error)
}

// planner plans an operation's steps from the app config's graph, and,
// for the operations that run only what changed, which steps did.
type planner struct {
	store  planStore
	render *renderer
}

// plan is an operation's plan of steps (the workflow's settings and the
// install's statuses are the caller's).
func (p *planner) plan(ctx context.Context, op store.InstallOperation) (contract.OperationPlan, error) {
	graph, err := p.installGraph(ctx, op.InstallID, op.ConfigVersion)
	if err != nil {
		return contract.OperationPlan{}, err
	}
	plan := contract.OperationPlan{InstallID: op.InstallID, Kind: op.Kind, ApprovalMode: op.ApprovalMode, PlanOnly: op.PlanOnly,
		ConfigVersion: graph.Version, InMaintenanceWindow: op.InMaintenanceWindow}
	if plan.Steps, err = planSteps(op, graph); err != nil {
		return contract.OperationPlan{}, temporal.NewNonRetryableApplicationError(err.Error(), "InvalidOperation", err)
	}
	plan.Steps, err = p.byKind(ctx, op, plan.Steps)
	return plan, err
}

// byKind adjusts the steps to what the operation's kind runs of them.
func (p *planner) byKind(ctx context.Context, op store.InstallOperation, steps []contract.StepSpec) ([]contract.StepSpec, error) {
	switch op.Kind {
	case contract.OpUpdateInputs:
		changed, err := p.changedSteps(ctx, op, steps)
		markChanged(steps, changed)
		return steps, err
	case contract.OpDeployConfig:
		return p.planConfigDeploy(ctx, op, steps)
	case contract.OpDeprovision:
		return p.planDeprovision(ctx, op, steps)
	case contract.OpDriftCheck:
		return driftSteps(steps), nil
	case contract.OpReconcileDrift:
		return steps, p.planReconcile(ctx, op, steps)
	}
	return steps, nil
}

// installGraph is the component graph of the config version an operation
// runs, in deployment order.
func (p *planner) installGraph(ctx context.Context, installID string, version int) (installGraph, error) {
	_, cfg, v, err := p.render.installAt(ctx, installID, version)
	if err != nil {
		return installGraph{}, err
	}
	g := installGraph{Version: v, Deps: cfg.Graph()}
	order, err := g.Deps.Order()
	if err != nil {
		return installGraph{}, invalidConfig(err)
	}
	for _, name := range order {
		c, _ := cfg.Component(name)
		g.Components = append(g.Components, graphNode{Name: name, Type: c.Type,
			EnvReadsComponents: cfg.EnvReadsComponents(name), EnvReadsSandbox: cfg.EnvReadsSandbox(name)})
	}
	return g, nil
}

// markChanged decides, before an update_inputs, a deploy_config or a
// reconcile_drift runs, what each step does: a changed one runs; one after a
// changed one (its rendering may read outputs that change) is looked at
// again when it starts (IfChanged); any other is Unchanged.
func markChanged(steps []contract.StepSpec, changed map[string]bool) {
	downstream := map[string]bool{}
	for i := range steps { // steps come after what they wait for
		st := &steps[i]
		for _, d := range st.After {
			if changed[d] || downstream[d] {
				downstream[st.Name] = true
			}
		}
		st.Unchanged = !changed[st.Name] && !downstream[st.Name]
		st.IfChanged = !changed[st.Name] && downstream[st.Name]
	}
}

// changedSteps are the steps whose job renders differently now than when
// it was last applied (or was never applied, or cannot render yet).
func (p *planner) changedSteps(ctx context.Context, op store.InstallOperation, steps []contract.StepSpec) (map[string]bool, error) {
	oc, data, err := p.render.loadStep(ctx, op.ID, "")
	if err != nil {
		return nil, err
	}
	applied, err := p.store.AppliedRenders(ctx, op.InstallID)
	if err != nil {
		return nil, err
	}
	changed := map[string]bool{}
	for _, st := range steps {
		digest, err := p.render.renderDigest(ctx, oc, st.Name, data)
		changed[st.Name] = err != nil || digest != applied[st.Name]
	}
	return changed, nil
}

// driftSteps are a drift check's steps: the sandbox and each terraform,
// helm_chart and container_image component, each planned at once (a check
// applies nothing, so no step waits for another).
func driftSteps(steps []contract.StepSpec) []contract.StepSpec {
	var out []contract.StepSpec
	for _, st := range steps {
		if st.Name != status.SandboxStep && !driftChecked[st.Type] {
			continue
		}
		st.After, st.Prestart, st.PrestartBeforeSandbox = nil, false, false
		out = append(out, st)
	}
	return out
}

// driftChecked are the component types a drift check plans.
var driftChecked = map[string]bool{contract.TypeTerraformModule: true, contract.TypeHelmChart: true, contract.TypeContainerImage: true}

// planReconcile marks a reconcile_drift's steps as an update_inputs marks
// its own (markChanged), with the steps its drift check found drifted, and
// that no apply has cleared since, as the changed ones: whatever their kind.
func (p *planner) planReconcile(ctx context.Context, op store.InstallOperation, steps []contract.StepSpec) error {
	check, err := p.store.GetOperationByID(ctx, op.TriggeredBy)
	if err != nil {
		return fmt.Errorf("the reconcile's drift check: %w", err)
	}
	drifted, err := p.stillDrifted(ctx, check)
	if err != nil {
		return err
	}
	markChanged(steps, drifted)
	return nil
}

// stillDrifted are the steps the drift check found drifted whose drift is
// still recorded (no apply cleared it since).
func (p *planner) stillDrifted(ctx context.Context, check store.InstallOperation) (map[string]bool, error) {
	op, err := p.store.GetOperation(ctx, check.OrgID, check.ID)
	if err != nil {
		return nil, err
	}
	rows, err := p.store.ListDrift(ctx, check.InstallID)
	if err != nil {
		return nil, err
	}
	recorded := map[string]bool{}
	for _, r := range rows {
		recorded[r.Name] = r.Drifted
	}
	out := map[string]bool{}
	for _, st := range op.Steps {
		if st.Status == status.StepDrifted && recorded[st.Name] {
			out[st.Name] = true
		}
	}
	return out, nil
}
