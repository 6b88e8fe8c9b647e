package activities

import (
	"context"

	"github.com/outpost-dev/outpost/jobmanifest"
	"github.com/outpost-dev/outpost/protocol"
)

// planPolicies is what a step's plan job tells its runner's policy check:
// the vendor's policies (the operation's config version) and the install.
// The install's registry is left out while the sandbox has none (its own
// plan, or a first provision).
func (r *renderer) planPolicies(ctx context.Context, oc operationContext, step string) *protocol.PlanPolicies {
	var registry string
	if reg, err := r.installRegistry(ctx, oc.inst.ID); err == nil {
		registry = reg.Address
	}
	return jobmanifest.PlanPolicies(oc.cfg, jobmanifest.Install{ID: oc.inst.ID, Name: oc.inst.Name, Labels: oc.inst.Labels}, step, registry)
}
