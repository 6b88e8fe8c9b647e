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

// A deploy_config brings an install to a config version: the steps whose
// build or rendered job differs from what the install runs are planned and
// applied (a step after a changed one is looked at again once it ends, as
// in update_inputs: markChanged); the others end unchanged. Components the
// install runs that the version does not have are torn down after every
// deploy step has ended well (make before break), in reverse dependency
// order, as the config version they were deployed from defines them.

// removedComponent is a component the install runs that the deployed config
// version does not have.
type removedComponent struct {
	Name, Type string
	// Deps are its dependencies in the version it was deployed from.
	Deps []string
}

// teardownSteps are the steps that tear the removed components down: after
// every deploy step, and each after the removed components that depend on
// it.
func teardownSteps(removed []removedComponent, deploy []contract.StepSpec) ([]contract.StepSpec, error) {
	g := appconfig.Graph{}
	types := map[string]string{}
	for _, r := range removed {
		g[r.Name], types[r.Name] = []string{}, r.Type
	}
	for _, r := range removed {
		for _, d := range r.Deps {
			if _, ok := g[d]; ok {
				g[r.Name] = append(g[r.Name], d)
			}
		}
	}
	order, err := g.Order()
	if err != nil {
		return nil, invalidConfig(err)
	}
	var first []string
	for _, st := range deploy {
		first = append(first, st.Name)
	}
	dependents := g.Reverse()
	var steps []contract.StepSpec
	for _, name := range order {
		after := slices.Clone(first)
		for _, o := range order {
			if slices.Contains(dependents[name], o) {
				after = append(after, o)
			}
		}
		steps = append(steps, contract.StepSpec{Name: name, After: after, Destroy: true, Type: types[name]})
	}
	return steps, nil
}

// planConfigDeploy marks what a deploy_config changes among its deploy
// steps, and adds the teardowns of the components the version removes.
func (p *planner) planConfigDeploy(ctx context.Context, op store.InstallOperation, steps []contract.StepSpec) ([]contract.StepSpec, error) {
	oc, err := p.render.loadOperation(ctx, op.ID, "")
	if err != nil {
		return nil, err
	}
	changed, err := p.changedSteps(ctx, op, steps)
	if err != nil {
		return nil, err
	}
	builds, removed, err := p.runningComponents(ctx, oc)
	if err != nil {
		return nil, err
	}
	for _, st := range steps {
		if st.Name != status.SandboxStep && !changed[st.Name] {
			changed[st.Name], err = p.buildChanged(ctx, oc.cfg, st.Name, builds[st.Name])
			if err != nil {
				return nil, err
			}
		}
	}
	markChanged(steps, changed)
	down, err := teardownSteps(removed, steps)
	return append(steps, down...), err
}

// planDeprovision adds, to a deprovision's steps, the teardowns of the
// components the install runs beyond its config version (left by a config
// deploy that failed): before every other step.
func (p *planner) planDeprovision(ctx context.Context, op store.InstallOperation, steps []contract.StepSpec) ([]contract.StepSpec, error) {
	oc, err := p.render.loadOperation(ctx, op.ID, "")
	if err != nil {
		return nil, err
	}
	_, removed, err := p.runningComponents(ctx, oc)
	if err != nil {
		return nil, err
	}
	first, err := teardownSteps(removed, nil)
	return destroyFirst(first, steps), err
}

// destroyFirst puts the steps first before every one of steps.
func destroyFirst(first, steps []contract.StepSpec) []contract.StepSpec {
	var names []string
	for _, st := range first {
		names = append(names, st.Name)
	}
	for i := range steps {
		steps[i].After = slices.Concat(steps[i].After, names)
	}
	return append(first, steps...)
}

// runningComponents splits what the install runs: the builds of the
// components of the operation's config version, by name, and the components
// that version does not have.
func (p *planner) runningComponents(ctx context.Context, oc operationContext) (map[string]string, []removedComponent, error) {
	running, err := p.store.ListInstallComponents(ctx, oc.inst.ID)
	if err != nil {
		return nil, nil, err
	}
	builds := map[string]string{}
	var removed []removedComponent
	for _, ic := range running {
		if _, ok := oc.cfg.Component(ic.Component); ok {
			builds[ic.Component] = ic.BuildID
			continue
		}
		r, err := p.removedComponent(ctx, oc.inst, ic)
		if err != nil {
			return nil, nil, err
		}
		removed = append(removed, r)
	}
	return builds, removed, nil
}

// buildChanged says whether the component's source in cfg differs from that
// of the build the install runs ("": none).
func (p *planner) buildChanged(ctx context.Context, cfg *appconfig.Config, name, buildID string) (bool, error) {
	if buildID == "" {
		return true, nil
	}
	key, err := cfg.BuildKey(name)
	if err != nil {
		return false, invalidConfig(err)
	}
	b, err := p.store.GetBuildByID(ctx, buildID)
	if err != nil {
		return false, err
	}
	return b.SourceDigest != key.Digest, nil
}

// removedComponent describes a component the install runs as the config
// version it was deployed from defines it.
func (p *planner) removedComponent(ctx context.Context, inst store.Install, ic store.InstallComponent) (removedComponent, error) {
	v, err := p.render.componentVersion(ctx, ic)
	if err != nil {
		return removedComponent{}, err
	}
	cfg, _, err := p.render.installConfig(ctx, inst.OrgID, inst.AppID, v)
	if err != nil {
		return removedComponent{}, err
	}
	c, ok := cfg.Component(ic.Component)
	if !ok {
		return removedComponent{}, invalidConfig(fmt.Errorf("component %s, which the install runs, is not in config version %d", ic.Component, v))
	}
	return removedComponent{Name: ic.Component, Type: c.Type, Deps: cfg.Graph()[ic.Component]}, nil
}
