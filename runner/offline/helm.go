package offline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/outpost-dev/outpost/jobmanifest"
	"github.com/outpost-dev/outpost/protocol"
)

// helm deploys a helm_chart component as the connected runner does: a helm
// plan job (its diff in the step's log, its plan policies' verdict in the
// step's result; a denial stops the step), then a deploy job. Both install
// its chart from its build in the install's registry (the sync step loaded
// it there), its values and images as jobmanifest renders them for the
// control plane, into the cluster kubeconfig names.
func (d *deployment) helm(ctx context.Context, st *protocol.OfflineStep) error {
	m, err := d.helmManifest(st.Component)
	if err != nil {
		return err
	}
	m.Operation = protocol.HelmPlan
	if _, err := d.helmJob(ctx, st, m); err != nil {
		return err
	}
	m.Operation = protocol.HelmDeploy
	raw, err := d.helmJob(ctx, st, m)
	if err != nil {
		return err
	}
	var out protocol.HelmReleaseOutputs
	if err := json.Unmarshal(raw, &out); err != nil {
		return fmt.Errorf("component %s: the deploy's outputs: %w", st.Component, err)
	}
	return d.recordValues(st, jobmanifest.HelmOutputs(out))
}

// helmManifest is a helm_chart component's job manifest, but for its
// operation.
func (d *deployment) helmManifest(name string) (protocol.HelmManifest, error) {
	chart, err := d.artifact(name)
	if err != nil {
		return protocol.HelmManifest{}, err
	}
	data, err := d.data()
	if err != nil {
		return protocol.HelmManifest{}, err
	}
	kubeconfig, err := d.kubeconfig(data, name)
	if err != nil {
		return protocol.HelmManifest{}, err
	}
	m, err := jobmanifest.HelmRelease(d.cfg, name, "", kubeconfig)
	if err != nil {
		return m, err
	}
	if _, err := jobmanifest.HelmChart(d.cfg, data, name, *chart, &m); err != nil {
		return m, err
	}
	if m.Images != nil { // no network: the images come from the bundle (the sync step loaded them) or nowhere
		m.Images.Offline, m.Images.Bundled = true, map[string]string{}
		for ref, desc := range d.b.images[name] {
			m.Images.Bundled[ref] = desc.Digest.String()
		}
	}
	m.Policies = jobmanifest.PlanPolicies(d.cfg, d.inst, name, chart.Registry.Address)
	return m, nil
}

// helmJob runs a helm job; it returns its outputs when it succeeded. A
// plan's policy results go in the step's result, also when they deny.
func (d *deployment) helmJob(ctx context.Context, st *protocol.OfflineStep, m protocol.HelmManifest) (json.RawMessage, error) {
	res, err := d.runJob(ctx, st, protocol.JobTypeHelm, m)
	if err != nil {
		return nil, err
	}
	if m.Operation == protocol.HelmPlan {
		var plan protocol.HelmPlanOutputs
		_ = json.Unmarshal(res.Outputs, &plan) // none when it failed
		setPolicy(st, plan.Policies)
	}
	if res.Status != protocol.StatusSucceeded {
		return nil, errors.New(res.Error)
	}
	return res.Outputs, nil
}

// setPolicy sets the step's policy result from a plan's: the first that
// denies (or could not be evaluated), else the first.
func setPolicy(st *protocol.OfflineStep, policies []protocol.PolicyResult) {
	for i, p := range policies {
		if st.Policy == nil || (st.Policy.Passed() && !p.Passed()) {
			st.Policy = &policies[i]
		}
	}
}
