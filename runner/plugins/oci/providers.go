package oci

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/outpost-dev/outpost/runner/plugins"
	"github.com/outpost-dev/outpost/runner/plugins/terraform/providers"
)

// vendorProviders resolves the providers the module (the manifest's Source)
// requires with the build runner's terraform and CLI configuration
// (--terraform-cli-config: where the vendor says providers come from) and
// returns their layer: nil when the module requires none, or when the
// build runner has no terraform (then the install's runner resolves them,
// as before; the log says so).
func (p *plugin) vendorProviders(ctx context.Context, log io.Writer, run plugins.Run) ([]byte, error) {
	bin := ""
	for _, kv := range run.Env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == providers.EnvTerraform {
			bin = v
		}
	}
	if bin == "" {
		logf(log, "no terraform on this build runner (%s): the module's providers are not vendored", providers.EnvTerraform)
		return nil, nil
	}
	dir := filepath.Join(run.Dir, "providers-module")
	if err := extractArchive(p.m.Source, dir); err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	empty := filepath.Join(run.Dir, "terraformrc")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		return nil, err
	}
	tfEnv := providers.TerraformEnv(run.Env, empty)
	logf(log, "resolving the module's providers: %s init, with the CLI configuration %s", bin, providers.CLIConfig(tfEnv))
	platforms := providers.Platforms(providers.Platform, p.m.Platforms)
	logf(log, "vendoring providers for %s (this build runner's, then the install runners')", strings.Join(platforms, ", "))
	v, err := providers.Vendor(ctx, bin, dir, tfEnv, platforms, log)
	if err != nil {
		return nil, err
	}
	if v.Layer == nil {
		logf(log, "the module requires no provider")
		return nil, nil
	}
	for _, pr := range v.Providers {
		logf(log, "vendored provider %s", pr)
	}
	return v.Layer, nil
}
