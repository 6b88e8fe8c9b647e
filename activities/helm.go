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
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// OutputKubeconfig is the sandbox output holding a kubeconfig for the
// install's cluster, where helm_chart components deploy.
const OutputKubeconfig = "kubeconfig"

// helmJobTimeout bounds one helm job on the runner.
const helmJobTimeout = 30 * time.Minute

// EnqueueHelmJob renders a helm_chart step's job — the chart in the
// install's registry (its build, synced there), values rendered from
// templates, the cluster's kubeconfig (its template's, or the sandbox's) —
// and queues it on the install's runner. Idempotent by key.
func (a *Activities) EnqueueHelmJob(ctx context.Context, in contract.HelmJobInput) (_ contract.JobRef, err error) {
	defer classified(&err)
	oc, err := a.loadOperation(ctx, in.OperationID, in.Step)
	if err != nil {
		return contract.JobRef{}, err
	}
	op, inst, cfg := oc.op, oc.inst, oc.cfg
	c, ok := cfg.Component(in.Step)
	if !ok || c.Helm == nil {
		return contract.JobRef{}, temporal.NewNonRetryableApplicationError("no helm_chart component "+in.Step+" in the app config", "InvalidConfig", nil)
	}
	data, err := a.renderData(ctx, cfg, inst)
	if err != nil {
		return contract.JobRef{}, err
	}
	kubeconfig, err := a.kubeconfig(ctx, cfg, in.Step, op.InstallID, data)
	if err != nil {
		return contract.JobRef{}, err
	}
	st, err := a.Store.GetStep(ctx, in.OperationID, in.Step)
	if err != nil {
		return contract.JobRef{}, err
	}
	var digest string
	m := protocol.HelmManifest{Operation: in.Operation, Kubeconfig: kubeconfig, Release: c.Helm.ReleaseName,
		Namespace: c.Helm.Namespace, CreateNamespace: c.Helm.CreateNamespace, TimeoutMS: c.Helm.Timeout.Milliseconds(), Wait: c.Helm.Wait}
	if in.Operation != protocol.HelmUninstall {
		values, err := cfg.RenderHelmValues(in.Step, data)
		if err != nil {
			return contract.JobRef{}, nonRetryable("render "+in.Step, err)
		}
		if m.ValuesFiles, err = cfg.HelmValuesFiles(in.Step); err != nil {
			return contract.JobRef{}, nonRetryable("values files of "+in.Step, err)
		}
		m.Values, m.SensitiveValues = values.Values, values.Sensitive
		digest = helmDigest(values, m.ValuesFiles, kubeconfig)
		if m.Chart, _, err = a.deployedArtifact(ctx, op.InstallID, in.Step, st.BuildID); err != nil {
			return contract.JobRef{}, err
		}
		if m.Chart == nil {
			return contract.JobRef{}, temporal.NewNonRetryableApplicationError("step "+in.Step+" has no synced build to deploy", "NoBuild", nil)
		}
	}
	spec := store.JobSpec{Key: in.Key, Type: protocol.JobTypeHelm, TimeoutMS: helmJobTimeout.Milliseconds()}
	return a.enqueueStepJob(ctx, op, in.Step, spec, m, func(jobID string) store.StepChange {
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

// kubeconfig is the kubeconfig of the cluster a helm_chart component
// deploys to: its kubeconfig template rendered, or the sandbox's output.
func (a *Activities) kubeconfig(ctx context.Context, cfg *appconfig.Config, step, installID string, data appconfig.Data) (string, error) {
	kc, err := cfg.RenderHelmKubeconfig(step, data)
	if err != nil {
		return "", nonRetryable("render the kubeconfig of "+step, err)
	}
	if kc != "" {
		return kc, nil
	}
	raw, ok, err := a.sandboxOutput(ctx, installID, OutputKubeconfig)
	if err != nil {
		return "", err
	}
	if !ok || json.Unmarshal(raw, &kc) != nil || kc == "" {
		return "", temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"the install's sandbox has no %q output, and component %s sets no kubeconfig: helm_chart components deploy into the cluster the sandbox provides, or the one their kubeconfig names (see docs/APP_CONFIG.md)",
			OutputKubeconfig, step), "NoCluster", nil)
	}
	return kc, nil
}

// RecordHelmPlan stores a helm plan's diff on its step, as a terraform
// plan's text: objects added, changed (by the chart, or in the cluster
// behind helm's back) and removed are its counts.
func (a *Activities) RecordHelmPlan(ctx context.Context, opID, step, jobID string) (_ contract.PlanSummary, err error) {
	defer classified(&err)
	var out protocol.HelmPlanOutputs
	if failed, err := a.jobOutputs(ctx, opID, step, jobID, &out); err != nil || failed != "" {
		return contract.PlanSummary{Failed: failed != "", Error: failed}, err
	}
	text := out.Diff
	if !out.HasChanges {
		text = "No changes: the release's objects are as the chart renders them.\n"
	}
	return a.recordPlan(ctx, opID, step, protocol.TerraformPlanOutputs{HasChanges: out.HasChanges, PlanText: text,
		Add: len(out.Added), Change: len(out.Changed) + len(out.Drifted), Destroy: len(out.Removed)})
}

// PlanUninstall records, as a teardown step's plan, what uninstalling the
// component's release does, and that the step started. It runs nothing: the
// release's objects are the chart's, and all of them go — those its last
// deploy recorded (its "objects" output) are listed and counted.
func (a *Activities) PlanUninstall(ctx context.Context, opID, step string) (_ contract.PlanSummary, err error) {
	defer classified(&err)
	oc, err := a.loadOperation(ctx, opID, step)
	if err != nil {
		return contract.PlanSummary{}, err
	}
	c, ok := oc.cfg.Component(step)
	if !ok || c.Helm == nil {
		return contract.PlanSummary{}, temporal.NewNonRetryableApplicationError("no helm_chart component "+step+" in the app config", "InvalidConfig", nil)
	}
	if err := a.Store.UpdateStep(ctx, opID, step, store.StepChange{StartedAt: new(time.Now().UTC())}); err != nil {
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
	return a.recordPlan(ctx, opID, step, protocol.TerraformPlanOutputs{HasChanges: true, PlanText: text, Destroy: len(objects)})
}

// releaseObjects are the objects ("Kind/namespace/name") a helm_chart
// component's last deploy recorded in its outputs (none when it has none).
func (a *Activities) releaseObjects(ctx context.Context, installID, step string) ([]string, error) {
	rows, err := a.Store.ListOutputs(ctx, installID)
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
func (a *Activities) RecordHelmRelease(ctx context.Context, opID, step, jobID string) (_ contract.ApplySummary, err error) {
	defer classified(&err)
	op, st, err := a.stepOf(ctx, opID, step)
	if err != nil {
		return contract.ApplySummary{}, err
	}
	if st.Destroy {
		var un protocol.HelmUninstallOutputs
		if failed, err := a.jobOutputs(ctx, opID, step, jobID, &un); err != nil || failed != "" {
			return contract.ApplySummary{Failed: failed != "", Error: failed}, err
		}
		// What it removed: the plan counted what the last deploy recorded.
		if err := a.Store.UpdateStep(ctx, opID, step, store.StepChange{Remove: new(len(un.Objects))}); err != nil {
			return contract.ApplySummary{}, err
		}
		return contract.ApplySummary{}, a.ForgetComponent(ctx, opID, step)
	}
	var out protocol.HelmReleaseOutputs
	if failed, err := a.jobOutputs(ctx, opID, step, jobID, &out); err != nil || failed != "" {
		return contract.ApplySummary{Failed: failed != "", Error: failed}, err
	}
	objects := make([]string, len(out.Objects))
	for i, o := range out.Objects {
		objects[i] = o.Kind + "/" + o.Name
		if o.Namespace != "" {
			objects[i] = o.Kind + "/" + o.Namespace + "/" + o.Name
		}
	}
	if err := a.saveOutputs(ctx, op.InstallID, step, appconfig.HelmOutputValues(out.Release, out.Namespace, out.Revision, out.Status, objects)); err != nil {
		return contract.ApplySummary{}, err
	}
	return contract.ApplySummary{}, a.recordDeployedBuild(ctx, opID, op.InstallID, step)
}

// sandboxOutput is one output of the install's sandbox (false when it has
// none of that name).
func (a *Activities) sandboxOutput(ctx context.Context, installID, name string) (json.RawMessage, bool, error) {
	outputs, err := a.sandboxOutputs(ctx, installID)
	o, ok := outputs[name]
	return o.Value, ok, err
}

// sandboxOutputs are the outputs of the install's sandbox (none before it
// is applied).
func (a *Activities) sandboxOutputs(ctx context.Context, installID string) (map[string]protocol.TerraformOutput, error) {
	rows, err := a.Store.ListOutputs(ctx, installID)
	if err != nil {
		return nil, err
	}
	raw, ok := rows[status.SandboxStep]
	if !ok {
		return nil, nil
	}
	var sb protocol.TerraformApplyOutputs
	if err := json.Unmarshal([]byte(raw), &sb); err != nil {
		return nil, fmt.Errorf("sandbox outputs: %w", err)
	}
	return sb.Outputs, nil
}

// saveOutputs records a component's outputs (the shape terraform's have).
func (a *Activities) saveOutputs(ctx context.Context, installID, step string, values map[string]appconfig.Value) error {
	raw, err := json.Marshal(struct {
		Outputs map[string]appconfig.Value `json:"outputs"`
	}{values})
	if err != nil {
		return err
	}
	return a.Store.SaveOutputs(ctx, installID, step, string(raw))
}
