package terraform

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// EnvKubeAssets names, in a job's environment, the directory holding etcd
// and kube-apiserver (Options.KubeAssets).
const EnvKubeAssets = "OUTPOST_KUBE_ASSETS"

// EnvKubeAssetsWait names, in a job's environment, how long outpost-cluster
// waits for missing binaries (Options.KubeAssetsWait).
const EnvKubeAssetsWait = "OUTPOST_KUBE_ASSETS_WAIT"

// Options are a runner's settings for its terraform jobs, handed to each
// job in its environment (Env). Zero values take the defaults.
type Options struct {
	// Binary is the terraform binary (a path, or a name on PATH). Default:
	// Find's: "terraform" on PATH, else ToolsPath in the working directory
	// or one of its parents (where scripts/tools.sh builds it).
	Binary string
	// CLIConfig is the CLI configuration file jobs use
	// (TF_CLI_CONFIG_FILE). Default: an empty one in each job's directory.
	CLIConfig string
	// NoInitCache makes every job run terraform init, rather than reuse an earlier job's init of the
	// same module within the hour (see EnvInitCache).
	NoInitCache bool
	// KubeAssets is a directory holding etcd and kube-apiserver, passed to
	// jobs as EnvKubeAssets: local sandboxes' provisioners start a cluster
	// with outpost-cluster, which finds them there.
	KubeAssets string
	// KubeAssetsWait, passed to jobs as EnvKubeAssetsWait, is how long
	// outpost-cluster waits for binaries still being built (0: not at all).
	KubeAssetsWait time.Duration
}

// Resolve checks o and makes its paths absolute, finding the binary from
// the working directory cwd. A configured binary, CLI configuration or
// kube assets directory that is not there is an error; no binary at all is
// not (terraform jobs fail, saying so): it is returned as missing.
func (o Options) Resolve(path, cwd string) (resolved Options, missing, err error) {
	switch bin, ferr := Find(o.Binary, path, cwd); {
	case ferr == nil:
		o.Binary = bin
	case o.Binary != "":
		return o, nil, fmt.Errorf("terraform: %w", ferr)
	default:
		missing = ferr
	}
	if o.KubeAssets != "" {
		if o.KubeAssets, err = filepath.Abs(o.KubeAssets); err != nil {
			return o, nil, fmt.Errorf("kube assets: %w", err)
		}
		if fi, err := os.Stat(o.KubeAssets); err != nil || !fi.IsDir() {
			return o, nil, fmt.Errorf("kube assets %s: must be a directory (holding etcd and kube-apiserver)", o.KubeAssets)
		}
	}
	if o.CLIConfig != "" {
		if o.CLIConfig, err = filepath.Abs(o.CLIConfig); err != nil {
			return o, nil, fmt.Errorf("terraform CLI config: %w", err)
		}
		if fi, err := os.Stat(o.CLIConfig); err != nil || fi.IsDir() {
			return o, nil, fmt.Errorf("terraform CLI config %s: must be a file (an empty one will do)", o.CLIConfig)
		}
	}
	return o, missing, nil
}

// Env is what o adds to every job's clean environment; cacheDir is where
// the init cache lives.
func (o Options) Env(cacheDir string) []string {
	var env []string
	if o.Binary != "" {
		env = append(env, EnvTerraform+"="+o.Binary)
	}
	if o.CLIConfig != "" {
		env = append(env, "TF_CLI_CONFIG_FILE="+o.CLIConfig)
	}
	if !o.NoInitCache {
		env = append(env, EnvInitCache+"="+cacheDir)
	}
	if o.KubeAssets != "" {
		env = append(env, EnvKubeAssets+"="+o.KubeAssets)
	}
	if o.KubeAssetsWait > 0 {
		env = append(env, EnvKubeAssetsWait+"="+o.KubeAssetsWait.String())
	}
	return env
}
