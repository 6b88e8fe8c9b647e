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
// returns "" when the build vendored none, or none for this runner's
// platform (the log says so): then terraform finds them as it always did,
// through the runner's CLI configuration.
func (p *plugin) vendoredProviders(run plugins.Run, dir string) string {
	if p.providers == nil {
		return ""
	}
	pluginDir, err := providers.Unpack(p.providers, filepath.Join(run.Dir, providersDir), dir, providers.Platform)
	if err != nil {
		fmt.Fprintf(run.Stdout, "outpost: %v: terraform installs the providers itself\n", err)
		return ""
	}
	fmt.Fprintln(run.Stdout, "outpost: terraform providers: those the module's build vendored, with its lock file (no registry is contacted)")
	return pluginDir
}
