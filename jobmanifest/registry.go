package jobmanifest

import (
	"encoding/json"
	"fmt"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
)

// Outputs of an install's sandbox that name the install's own registry.
const (
	OutputRegistryAddress   = "registry_address"
	OutputRegistryUsername  = "registry_username"
	OutputRegistryPassword  = "registry_password"
	OutputRegistryPlainHTTP = "registry_plain_http"
)

// RepositoryPrefix is where an install's registry keeps the app's
// artifacts: "outpost/<component>".
const RepositoryPrefix = "outpost/"

// Workspace is the terraform state workspace of an install's step.
func Workspace(installID, step string) string {
	if step == status.SandboxStep {
		return installID + ".sandbox"
	}
	return installID + ".component." + step
}

// ErrNoInstallRegistry is InstallRegistry's error when the sandbox names no
// registry.
var ErrNoInstallRegistry = fmt.Errorf(
	"the install's sandbox has no %q output: an install deploys only from its own registry, which its sandbox provides (see docs/APP_CONFIG.md)",
	OutputRegistryAddress)

// InstallRegistry is the install's own registry, from its sandbox's
// outputs.
func InstallRegistry(outputs map[string]protocol.TerraformOutput) (protocol.RegistryAccess, error) {
	var acc protocol.RegistryAccess
	for _, o := range []struct {
		name string
		into any
	}{{OutputRegistryAddress, &acc.Address}, {OutputRegistryUsername, &acc.Username},
		{OutputRegistryPassword, &acc.Password}, {OutputRegistryPlainHTTP, &acc.PlainHTTP}} {
		if out, ok := outputs[o.name]; ok {
			if err := json.Unmarshal(out.Value, o.into); err != nil {
				return acc, fmt.Errorf("the sandbox's %s output: %w", o.name, err)
			}
		}
	}
	if acc.Address == "" {
		return acc, ErrNoInstallRegistry
	}
	return acc, nil
}
