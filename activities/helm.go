package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/jobmanifest"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// helmJobTimeout bounds one helm job on the runner.
const helmJobTimeout = 30 * time.Minute

// helmStore is what the helm activities read and write of the store beyond
// the helpers'.
type helmStore interface {
	GetStep(ctx context.Context, opID, name string) (store.InstallStep, error)
	UpdateStep(ctx context.Context, opID, name string, change store.StepChange) error
	ListOutputs(ctx context.Context, installID string) (map[string]string, error)
}

// Helm are the activities of a helm_chart step: its plan, deploy and
// uninstall jobs, and what they recorded.
type Helm struct {
	store     helmStore
	render    *renderer
	steps     *stepJobs
	installed *installed
}

// EnqueueHelmJob renders a helm_chart step's job — the chart in the
// install's registry (its build, synced there), values rendered from
// templates, the cluster's kubeconfig (its template's, or the sandbox's) —
// and queues it on the install's runner. Idempotent by key.
func (a *Helm) EnqueueHelmJob(ctx context.Context, in contract.HelmJobInput) (contract.JobRef, error) {
	oc, err := a.render.loadOperation(ctx, in.OperationID, in.Step)
	if err != nil {
		return contract.JobRef{}, err
	}
	data, err := a.render.renderData(ctx, oc.cfg, oc.inst)
	if err != nil {
		return contract.JobRef{}, err
	}
	kubeconfig, err := a.render.kubeconfig(ctx, oc.cfg, in.Step, oc.op.InstallID, data)
	if err != nil {
		return contract.JobRef{}, err
	}
	st, err := a.store.GetStep(ctx, in.OperationID, in.Step)
	if err != nil {
		return contract.JobRef{}, err
	}
	m, err := jobmanifest.HelmRelease(oc.cfg, in.Step, in.Operation, kubeconfig)
	if err != nil {
		return contract.JobRef{}, manifestError(err)
	}
	if in.Operation != protocol.HelmUninstall {
		m.Policies = a.render.planPolicies(ctx, oc, in.Step)
	}
	var digest string
	if in.Operation != protocol.HelmUninstall {
		if digest, err = a.chart(ctx, oc, st, data, &m); err != nil {
			return contract.JobRef{}, err
		}
	}
	spec := store.JobSpec{Key: in.Key, Type: protocol.JobTypeHelm, TimeoutMS: helmJobTimeout.Milliseconds()}
	return a.steps.enqueue(ctx, oc.op, in.Step, spec, m, func(jobID string) store.StepChange {
		change := store.StepChange{Status: new(status.StepApplying), ApplyJobID: &jobID}
		if in.Operation == protocol.HelmPlan {
			change = store.StepChange{Status: new(status.StepPlanning), PlanJobID: &jobID, RenderDigest: &digest}
		}
		if st.StartedAt == nil { // a drift check's plan: no build was delivered first
			change.StartedAt = new(time.Now().UTC())
		}
		return change
	})
}

// chart sets the chart a plan or deploy job installs (the step's build, in
// the install's registry) and its values; it returns the digest of what it
// rendered.
func (a *Helm) chart(ctx context.Context, oc operationContext, st store.InstallStep, data appconfig.Data, m *protocol.HelmManifest) (string, error) {
	chart, _, err := a.installed.deployedArtifact(ctx, oc.op.InstallID, st.Name, st.BuildID)
	if err != nil {
		return "", err
	}
	if chart == nil {
		return "", temporal.NewNonRetryableApplicationError("step "+st.Name+" has no synced build to deploy", "NoBuild", nil)
	}
	values, err := jobmanifest.HelmChart(oc.cfg, data, st.Name, *chart, m)
	if err != nil {
		return "", manifestError(err)
	}
	return helmDigest(values, m.ValuesFiles, m.Kubeconfig), nil
}

// RecordHelmPlan stores a helm plan's diff on its step, as a terraform
// plan's text: objects added, changed (by the chart, or in the cluster
// behind helm's back) and removed are its counts.
func (a *Helm) RecordHelmPlan(ctx context.Context, opID, step, jobID string) (contract.PlanSummary, error) {
	var out protocol.HelmPlanOutputs
	if failed, err := a.steps.outputs(ctx, opID, step, jobID, &out); err != nil || failed != "" {
		return failedPlan(failed, err)
	}
	text := out.Diff
	if !out.HasChanges {
		text = "No changes: the release's objects are as the chart renders them.\n"
	}
	return a.installed.recordPlan(ctx, opID, step, protocol.TerraformPlanOutputs{HasChanges: out.HasChanges, PlanText: text,
		Add: len(out.Added), Change: len(out.Changed) + len(out.Drifted), Destroy: len(out.Removed), Policies: out.Policies})
}

// PlanUninstall records, as a teardown step's plan, what uninstalling the
// component's release does, and that the step started. It runs nothing: the
// release's objects are the chart's, and all of them go — those its last
// deploy recorded (its "objects" output) are listed and counted.
func (a *Helm) PlanUninstall(ctx context.Context, opID, step string) (contract.PlanSummary, error) {
	oc, err := a.render.loadOperation(ctx, opID, step)
	if err != nil {
		return contract.PlanSummary{}, err
	}
	c, ok := oc.cfg.Component(step)
	if !ok || c.Helm == nil {
		return contract.PlanSummary{}, temporal.NewNonRetryableApplicationError("no helm_chart component "+step+" in the app config", "InvalidConfig", nil)
	}
	if err := a.store.UpdateStep(ctx, opID, step, store.StepChange{StartedAt: new(time.Now().UTC())}); err != nil {
		return contract.PlanSummary{}, err
	}
	objects, err := a.releaseObjects(ctx, oc.op.InstallID, step)
	if err != nil {
		return contract.PlanSummary{}, err
	}
	text := fmt.Sprintf("helm uninstall of release %q in namespace %q: every object of the release is deleted.\n", c.Helm.ReleaseName, c.Helm.Namespace)
	for _, o := range objects {
		text += "  - " + o + "\n"
	}
	return a.installed.recordPlan(ctx, opID, step, protocol.TerraformPlanOutputs{HasChanges: true, PlanText: text, Destroy: len(objects)})
}

// releaseObjects are the objects ("Kind/namespace/name") a helm_chart
// component's last deploy recorded in its outputs (none when it has none).
func (a *Helm) releaseObjects(ctx context.Context, installID, step string) ([]string, error) {
	rows, err := a.store.ListOutputs(ctx, installID)
	if err != nil || rows[step] == "" {
		return nil, err
	}
	var out struct {
		Outputs map[string]struct {
			Value []string `json:"value"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal([]byte(rows[step]), &out); err != nil {
		return nil, nil // not a release's outputs: the count is unknown
	}
	return out.Outputs[appconfig.HelmOutputObjects].Value, nil
}

// RecordHelmRelease records a helm job's end: after a deploy, the release's
// outputs (release_name, namespace, revision, status, and its objects as
// "Kind/namespace/name") and the build the component runs; after an
// uninstall, it forgets both.
func (a *Helm) RecordHelmRelease(ctx context.Context, opID, step, jobID string) (contract.ApplySummary, error) {
	op, st, err := a.steps.stepOf(ctx, opID, step)
	if err != nil {
		return contract.ApplySummary{}, err
	}
	if st.Destroy {
		return a.recordUninstall(ctx, opID, step, jobID)
	}
	var out protocol.HelmReleaseOutputs
	if failed, err := a.steps.outputs(ctx, opID, step, jobID, &out); err != nil || failed != "" {
		return contract.ApplySummary{Failed: failed != "", Error: failed}, err
	}
	if err := a.installed.saveOutputs(ctx, op.InstallID, step, jobmanifest.HelmOutputs(out)); err != nil {
		return contract.ApplySummary{}, err
	}
	return contract.ApplySummary{}, a.installed.recordDeployedBuild(ctx, opID, op.InstallID, step)
}

// recordUninstall records what an uninstall removed, and forgets what the
// component ran.
func (a *Helm) recordUninstall(ctx context.Context, opID, step, jobID string) (contract.ApplySummary, error) {
	var un protocol.HelmUninstallOutputs
	if failed, err := a.steps.outputs(ctx, opID, step, jobID, &un); err != nil || failed != "" {
		return contract.ApplySummary{Failed: failed != "", Error: failed}, err
	}
	// What it removed: the plan counted what the last deploy recorded.
	if err := a.store.UpdateStep(ctx, opID, step, store.StepChange{Remove: new(len(un.Objects))}); err != nil {
		return contract.ApplySummary{}, err
	}
	return contract.ApplySummary{}, a.installed.forget(ctx, opID, step)
}
