package terraform

import (
	"fmt"
	"path/filepath"

	"github.com/outpost-dev/outpost/runner/plugins"
	"github.com/outpost-dev/outpost/runner/plugins/terraform/providers"
)

// vendoredProviders extracts the providers the module's build vendored
// (p.providers) into the job's directory, with their lock file into the
// module (dir), and returns the plugin directory init is to use: then init
// installs from there only, and no registry or mirror is contacted. It
// returns "" when the build vendored none: then terraform finds them as it
// always did, through the runner's CLI configuration. A build that vendored
// providers but not for this runner's platform fails the job, naming the
// platform and those the build holds: the runner does not go to a registry
// the vendor meant it not to need.
func (p *plugin) vendoredProviders(run plugins.Run, dir string) (string, error) {
	if p.providers == nil {
		return "", nil
	}
	pluginDir, err := providers.Unpack(p.providers, filepath.Join(run.Dir, providersDir), dir, providers.Platform)
	if err != nil {
		return "", fmt.Errorf("the module's vendored providers: %w (builds vendor them for the platforms the app's install runners reported; rebuild the component once this runner has registered)", err)
	}
	fmt.Fprintln(run.Stdout, "outpost: terraform providers: those the module's build vendored, with its lock file (no registry is contacted)")
	return pluginDir, nil
}
