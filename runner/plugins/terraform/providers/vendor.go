package providers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/outpost-dev/outpost/internal/tarball"
)

// EnvTerraform names, in a job's environment, the terraform binary the
// runner found (terraform.EnvTerraform): a build vendors providers only
// with one.
const EnvTerraform = "OUTPOST_TERRAFORM"

// Names inside the layer, and terraform's in a module directory.
const (
	LockFile   = ".terraform.lock.hcl"
	PluginsDir = "plugins"
	// installed is where terraform init puts the providers in the module.
	installed = ".terraform/providers"
)

// Vendored is what Vendor packed.
type Vendored struct {
	Layer     []byte   // the providers layer (nil: the module requires none)
	Providers []string // "<host>/<namespace>/<type> <version> <os>_<arch>", sorted
}

// Vendor runs terraform (bin) init, without a backend, in moduleDir (the
// module's files, extracted; terraform leaves its data directory there) with
// env (TerraformEnv's) and packs the providers it installed and the lock
// file it wrote. terraform's output goes to log. A module that requires no
// provider gives an empty Vendored.
func Vendor(ctx context.Context, bin, moduleDir string, env []string, log io.Writer) (Vendored, error) {
	cmd := exec.CommandContext(ctx, bin, "init", "-backend=false", "-input=false", "-no-color")
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = moduleDir, env, log, log
	if err := cmd.Run(); err != nil {
		return Vendored{}, fmt.Errorf("terraform init (resolving the module's providers): %w", err)
	}
	lock, err := os.ReadFile(filepath.Join(moduleDir, LockFile))
	if errors.Is(err, os.ErrNotExist) {
		return Vendored{}, nil
	}
	if err != nil {
		return Vendored{}, err
	}
	// <host>/<namespace>/<type>/<version>/<os>_<arch>: each may be a
	// symlink (into a filesystem mirror or a plugin cache), followed here.
	dirs, err := filepath.Glob(filepath.Join(moduleDir, installed, "*", "*", "*", "*", "*"))
	if err != nil {
		return Vendored{}, err
	}
	slices.Sort(dirs)
	var buf bytes.Buffer
	w, err := tarball.NewWriter(&buf, tarball.Format{}, nil)
	if err != nil {
		return Vendored{}, err
	}
	if err := w.File(LockFile, 0o644, int64(len(lock)), bytes.NewReader(lock)); err != nil {
		return Vendored{}, err
	}
	var v Vendored
	for _, d := range dirs {
		rel, err := filepath.Rel(filepath.Join(moduleDir, installed), d)
		if err != nil {
			return Vendored{}, err
		}
		real, err := filepath.EvalSymlinks(d)
		if err != nil {
			return Vendored{}, fmt.Errorf("provider %s: %w", rel, err)
		}
		rel = filepath.ToSlash(rel)
		if err := w.AddFS(os.DirFS(real), tarball.Tree{Prefix: path.Join(PluginsDir, rel)}); err != nil {
			return Vendored{}, fmt.Errorf("packing provider %s: %w", rel, err)
		}
		v.Providers = append(v.Providers, describe(rel))
	}
	if err := w.Close(); err != nil {
		return Vendored{}, err
	}
	if len(v.Providers) == 0 {
		return Vendored{}, fmt.Errorf("terraform init wrote %s but installed no provider under %s", LockFile, installed)
	}
	v.Layer = buf.Bytes()
	return v, nil
}

// describe turns "<host>/<ns>/<type>/<version>/<platform>" into
// "<host>/<ns>/<type> <version> <platform>".
func describe(rel string) string {
	parts := strings.Split(rel, "/")
	return strings.Join(parts[:3], "/") + " " + parts[3] + " " + parts[4]
}

// TerraformEnv is terraform's environment at build: the job's, with
// cliConfig as TF_CLI_CONFIG_FILE when the job's names no file (so neither a
// ~/.terraformrc nor a missing file decides where providers come from), and
// neither a data directory nor the checkpoint service.
func TerraformEnv(jobEnv []string, cliConfig string) []string {
	env := make([]string, 0, len(jobEnv)+3)
	cfg := ""
	for _, kv := range jobEnv {
		name, value, _ := strings.Cut(kv, "=")
		switch name {
		case "TF_CLI_CONFIG_FILE":
			cfg = value
			continue
		case "TF_DATA_DIR", "CHECKPOINT_DISABLE", "TF_IN_AUTOMATION":
			continue
		}
		env = append(env, kv)
	}
	if fi, err := os.Stat(cfg); cfg == "" || err != nil || fi.IsDir() {
		cfg = cliConfig
	}
	return append(env, "TF_CLI_CONFIG_FILE="+cfg, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1")
}

// CLIConfig is the TF_CLI_CONFIG_FILE of env (TerraformEnv's).
func CLIConfig(env []string) string {
	for _, kv := range slices.Backward(env) {
		if v, ok := strings.CutPrefix(kv, "TF_CLI_CONFIG_FILE="); ok {
			return v
		}
	}
	return ""
}
