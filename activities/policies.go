package activities

import (
	"context"
	"maps"

	"github.com/outpost-dev/outpost/protocol"
)

// planPolicies is what a step's plan job tells its runner's policy check:
// the vendor's policies (the operation's config version) and the install.
// The install's registry is left out while the sandbox has none (its own
// plan, or a first provision).
func (r *renderer) planPolicies(ctx context.Context, oc operationContext, step string) *protocol.PlanPolicies {
	pp := &protocol.PlanPolicies{Modules: oc.cfg.Policies(), Step: step,
		Install: protocol.PolicyInstall{ID: oc.inst.ID, Name: oc.inst.Name, Labels: maps.Clone(oc.inst.Labels)}}
	if reg, err := r.installRegistry(ctx, oc.inst.ID); err == nil {
		pp.Install.Registry = reg.Address
	}
	return pp
}
