package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// An update_inputs operation runs only the steps whose rendered job (the
// sandbox's or a terraform component's variables and environment, a chart's
// values and kubeconfig) differs from the one they were last applied with.
// Each plan job records the digest of what it rendered on its step; a step
// that ends well records it as the install's (store.AppliedRender). Digests
// stay in the store: the workflow learns only "changed" or not.

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
func (a *Activities) changedSteps(ctx context.Context, op store.InstallOperation, steps []contract.StepSpec) (map[string]bool, error) {
	oc, data, err := a.loadStep(ctx, op.ID, "")
	if err != nil {
		return nil, err
	}
	applied, err := a.Store.AppliedRenders(ctx, op.InstallID)
	if err != nil {
		return nil, err
	}
	changed := map[string]bool{}
	for _, st := range steps {
		digest, err := a.renderDigest(ctx, oc, st.Name, data)
		changed[st.Name] = err != nil || digest != applied[st.Name]
	}
	return changed, nil
}

// StepRenderChanged says whether an update_inputs step's job renders
// differently now, once the steps it comes after have ended, than when it
// was last applied.
func (a *Activities) StepRenderChanged(ctx context.Context, opID, step string) (_ bool, err error) {
	defer classified(&err)
	oc, data, err := a.loadStep(ctx, opID, step)
	if err != nil {
		return false, err
	}
	applied, err := a.Store.AppliedRenders(ctx, oc.op.InstallID)
	if err != nil {
		return false, err
	}
	digest, err := a.renderDigest(ctx, oc, step, data)
	return err != nil || digest != applied[step], nil
}

// renderDigest is the digest of the job a step renders now: "" for a step
// that renders nothing (a container image).
func (a *Activities) renderDigest(ctx context.Context, oc operationContext, step string, data appconfig.Data) (string, error) {
	if step == status.SandboxStep {
		r, err := oc.cfg.RenderSandbox(data)
		if err != nil {
			return "", err
		}
		return terraformDigest(r, sourceDigest(oc.cfg, step)), nil
	}
	c, ok := oc.cfg.Component(step)
	switch {
	case ok && c.Terraform != nil:
		r, err := oc.cfg.RenderComponent(step, data)
		if err != nil {
			return "", err
		}
		return terraformDigest(r, ""), nil
	case ok && c.Helm != nil:
		values, err := oc.cfg.RenderHelmValues(step, data)
		if err != nil {
			return "", err
		}
		files, err := oc.cfg.HelmValuesFiles(step)
		if err != nil {
			return "", err
		}
		kc, err := a.kubeconfig(ctx, oc.cfg, step, oc.op.InstallID, data)
		if err != nil {
			return "", err
		}
		return helmDigest(values, files, kc), nil
	}
	return "", nil
}

// terraformDigest is the digest of a terraform job's variables and
// environment, and of its module's source when given (the sandbox's: a
// component's module is its build).
func terraformDigest(r *appconfig.Rendered, source string) string {
	vars, env := variablesFromEnv(r.Variables, r.EnvVars)
	// Fields in name order: the JSON a map of them was, so that digests recorded before still match.
	return digestOf(struct {
		Env       map[string]string          `json:"env"`
		Source    string                     `json:"source,omitempty"`
		Variables map[string]json.RawMessage `json:"variables"`
	}{env, source, vars})
}

// sourceDigest is the digest of the sandbox's module for the sandbox step,
// "" for a component's.
func sourceDigest(cfg *appconfig.Config, step string) string {
	if step != status.SandboxStep {
		return ""
	}
	d, err := cfg.SandboxDigest()
	if err != nil {
		return "unreadable"
	}
	return d
}

// helmDigest is the digest of a chart's values, values files and
// kubeconfig.
func helmDigest(values *appconfig.RenderedValues, files []string, kubeconfig string) string {
	return digestOf(struct { // fields in name order, as terraformDigest's
		Files      []string        `json:"files"`
		Kubeconfig string          `json:"kubeconfig"`
		Sensitive  []string        `json:"sensitive"`
		Values     json.RawMessage `json:"values"`
	}{files, kubeconfig, values.Sensitive, values.Values})
}

// digestOf is the sha256 of v as JSON (map keys sorted).
func digestOf(v any) string {
	b, _ := json.Marshal(v)
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// recordAppliedRender records, when a step ends well, the digest its plan
// job rendered as the one the install's step is applied with; a destroyed
// step's is forgotten. A plan-only operation changes nothing.
func (a *Activities) recordAppliedRender(ctx context.Context, opID, step string) error {
	op, st, err := a.stepOf(ctx, opID, step)
	if err != nil || op.PlanOnly {
		return err
	}
	if err := a.Store.ClearDrift(ctx, op.InstallID, step, opID); err != nil {
		return err
	}
	if st.Destroy {
		return a.Store.DeleteAppliedRender(ctx, op.InstallID, step)
	}
	if st.RenderDigest == "" {
		return nil
	}
	return a.Store.SetAppliedRender(ctx, store.AppliedRender{InstallID: op.InstallID, Name: step, Digest: st.RenderDigest, OperationID: opID})
}
