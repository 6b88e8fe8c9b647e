package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/jobmanifest"
	"github.com/outpost-dev/outpost/protocol"
)

// Outputs of an install's sandbox that name the install's own registry.
const (
	OutputRegistryAddress   = jobmanifest.OutputRegistryAddress
	OutputRegistryUsername  = jobmanifest.OutputRegistryUsername
	OutputRegistryPassword  = jobmanifest.OutputRegistryPassword
	OutputRegistryPlainHTTP = jobmanifest.OutputRegistryPlainHTTP
)

// OutputKubeconfig is the sandbox output holding a kubeconfig for the
// install's cluster, where helm_chart components deploy.
const OutputKubeconfig = jobmanifest.OutputKubeconfig

// installRepositoryPrefix is where an install's registry keeps the app's
// artifacts: "outpost/<component>".
const installRepositoryPrefix = jobmanifest.RepositoryPrefix

// Workspace is the terraform state workspace of an install's step.
func Workspace(installID, step string) string { return jobmanifest.Workspace(installID, step) }

// sandboxOutputs are the outputs of the install's sandbox (none before it
// is applied).
func (r *renderer) sandboxOutputs(ctx context.Context, installID string) (map[string]protocol.TerraformOutput, error) {
	rows, err := r.store.ListOutputs(ctx, installID)
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

// sandboxOutput is one output of the install's sandbox (false when it has
// none of that name).
func (r *renderer) sandboxOutput(ctx context.Context, installID, name string) (json.RawMessage, bool, error) {
	outputs, err := r.sandboxOutputs(ctx, installID)
	o, ok := outputs[name]
	return o.Value, ok, err
}

// installRegistry is the install's own registry, from its sandbox's outputs.
func (r *renderer) installRegistry(ctx context.Context, installID string) (protocol.RegistryAccess, error) {
	outputs, err := r.sandboxOutputs(ctx, installID)
	if err != nil {
		return protocol.RegistryAccess{}, err
	}
	acc, err := jobmanifest.InstallRegistry(outputs)
	switch {
	case errors.Is(err, jobmanifest.ErrNoInstallRegistry):
		return acc, temporal.NewNonRetryableApplicationError(err.Error(), "NoInstallRegistry", nil)
	case err != nil:
		return acc, temporal.NewNonRetryableApplicationError(err.Error(), "BadOutput", err)
	}
	return acc, nil
}

// kubeconfig is the kubeconfig of the cluster a helm_chart component
// deploys to: its kubeconfig template rendered, or the sandbox's output.
func (r *renderer) kubeconfig(ctx context.Context, cfg *appconfig.Config, step, installID string, data appconfig.Data) (string, error) {
	sandbox, err := r.sandboxOutputs(ctx, installID)
	if err != nil {
		return "", err
	}
	kc, err := jobmanifest.Kubeconfig(cfg, data, step, sandbox)
	if err != nil {
		return "", manifestError(err)
	}
	if kc == "" {
		return "", temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"the install's sandbox has no %q output, and component %s sets no kubeconfig: helm_chart components deploy into the cluster the sandbox provides, or the one their kubeconfig names (see docs/APP_CONFIG.md)",
			OutputKubeconfig, step), "NoCluster", nil)
	}
	return kc, nil
}
