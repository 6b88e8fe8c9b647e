package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/jobmanifest"
)

// An update_inputs operation runs only the steps whose rendered job (the
// sandbox's or a terraform component's variables and environment, a chart's
// values and kubeconfig) differs from the one they were last applied with.
// Each plan job records the digest of what it rendered on its step; a step
// that ends well records it as the install's (store.AppliedRender). Digests
// stay in the store: the workflow learns only "changed" or not.

// renderDigest is the digest of the job a step renders now: "" for a step
// that renders nothing (a container image).
func (r *renderer) renderDigest(ctx context.Context, oc operationContext, step string, data appconfig.Data) (string, error) {
	if step == status.SandboxStep {
		rendered, err := oc.cfg.RenderSandbox(data)
		if err != nil {
			return "", err
		}
		return terraformDigest(rendered, sourceDigest(oc.cfg, step)), nil
	}
	c, ok := oc.cfg.Component(step)
	switch {
	case ok && c.Terraform != nil:
		rendered, err := oc.cfg.RenderComponent(step, data)
		if err != nil {
			return "", err
		}
		return terraformDigest(rendered, ""), nil
	case ok && c.Helm != nil:
		values, err := oc.cfg.RenderHelmValues(step, data)
		if err != nil {
			return "", err
		}
		files, err := oc.cfg.HelmValuesFiles(step)
		if err != nil {
			return "", err
		}
		kc, err := r.kubeconfig(ctx, oc.cfg, step, oc.op.InstallID, data)
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
	vars, env := jobmanifest.Variables(r.Variables, r.EnvVars)
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
