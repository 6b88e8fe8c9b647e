package terraform

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/outpost-dev/outpost/runner/plugins"
	"github.com/outpost-dev/outpost/runner/plugins/terraform/providers"
)

// vendoredProviders extracts the providers the module's build vendored
// (p.providers) into the job's directory, with their lock file into the
// module (dir), and returns the plugin directory init is to use: then init
// installs from there only, and no registry or mirror is contacted. It
// returns "" when the build vendored none, or none for this runner's
// platform (said in the job's log, naming the platforms it holds): then
// terraform finds them as it always did, through the runner's CLI
// configuration (a mirror, or the registry).
func (p *plugin) vendoredProviders(run plugins.Run, dir string) (string, error) {
	if p.providers == nil {
		return "", nil
	}
	pluginDir, err := providers.Unpack(p.providers, filepath.Join(run.Dir, providersDir), dir, providers.Platform)
	if errors.Is(err, providers.ErrNoPlatform) {
		fmt.Fprintf(run.Stdout, "outpost: terraform providers: %v; installing them as this runner's terraform configuration says\n", err)
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("the module's vendored providers: %w", err)
	}
	fmt.Fprintln(run.Stdout, "outpost: terraform providers: those the module's build vendored, with its lock file (no registry is contacted)")
	return pluginDir, nil
}
