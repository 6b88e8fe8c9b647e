package activities

import (
	"context"
	"fmt"
	"slices"

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

// installGraph is the component graph of the config version an operation
// runs, in deployment order.
func (a *Activities) installGraph(ctx context.Context, installID string, version int) (installGraph, error) {
	inst, err := a.Store.GetInstallByID(ctx, installID)
	if err != nil {
		return installGraph{}, err
	}
	cfg, v, err := a.installConfig(ctx, inst.OrgID, inst.AppID, version)
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
