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
	// installed is where terraform init puts the providers in the module;
	// staged where Vendor gathers every platform's before packing them.
	installed = ".terraform/providers"
	staged    = ".terraform/outpost-vendored"
)

// Vendored is what Vendor packed.
type Vendored struct {
	Layer     []byte   // the providers layer (nil: the module requires none)
	Providers []string // "<host>/<namespace>/<type> <version> <os>_<arch>", sorted
}

// Vendor runs terraform (bin) init, without a backend, in moduleDir (the
// module's files, extracted; terraform leaves its data directory there) with
// env (TerraformEnv's) and packs the providers it installed, for this
// runner's Platform, and the same providers for the other platforms (from
// the filesystem mirrors of env's CLI configuration), with a lock file
// carrying the hashes of every platform's. terraform's output goes to log. A
// module that requires no provider gives an empty Vendored.
func Vendor(ctx context.Context, bin, moduleDir string, env, platforms []string, log io.Writer) (Vendored, error) {
	cmd := exec.CommandContext(ctx, bin, "init", "-backend=false", "-input=false", "-no-color")
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = moduleDir, env, log, log
	if err := cmd.Run(); err != nil {
		return Vendored{}, fmt.Errorf("terraform init (resolving the module's providers): %w", err)
	}
	if _, err := os.Stat(filepath.Join(moduleDir, LockFile)); errors.Is(err, os.ErrNotExist) {
		return Vendored{}, nil
	}
	stage := filepath.Join(moduleDir, staged)
	provs, err := stageInstalled(moduleDir, stage)
	if err != nil {
		return Vendored{}, err
	}
	others := slices.DeleteFunc(slices.Clone(platforms), func(p string) bool { return p == Platform })
	if len(others) > 0 {
		if err := stageOthers(ctx, bin, moduleDir, env, stage, provs, others, log); err != nil {
			return Vendored{}, err
		}
	}
	return pack(moduleDir, stage)
}

// stageInstalled links what init installed into stage (terraform's unpacked
// layout) and returns the providers, "<host>/<namespace>/<type>/<version>".
func stageInstalled(moduleDir, stage string) ([]string, error) {
	// <host>/<namespace>/<type>/<version>/<os>_<arch>: each may be a
	// symlink (into a filesystem mirror or a plugin cache), followed here.
	dirs, err := filepath.Glob(filepath.Join(moduleDir, installed, "*", "*", "*", "*", "*"))
	if err != nil {
		return nil, err
	}
	var provs []string
	for _, d := range dirs {
		rel, err := filepath.Rel(filepath.Join(moduleDir, installed), d)
		if err != nil {
			return nil, err
		}
		real, err := filepath.EvalSymlinks(d)
		if err != nil {
			return nil, fmt.Errorf("provider %s: %w", rel, err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(stage, rel)), 0o755); err != nil {
			return nil, err
		}
		if err := os.Symlink(real, filepath.Join(stage, rel)); err != nil {
			return nil, err
		}
		if p := path.Dir(filepath.ToSlash(rel)); !slices.Contains(provs, p) {
			provs = append(provs, p)
		}
	}
	if len(provs) == 0 {
		return nil, fmt.Errorf("terraform init wrote %s but installed no provider under %s", LockFile, installed)
	}
	return provs, nil
}

// stageOthers puts each provider for each of the other platforms into stage,
// from the CLI configuration's filesystem mirrors, then has terraform add
// their hashes to the lock file ("providers lock", from stage only). A
// platform some provider is in no mirror for is left out, said in log: its
// runners install providers as their own configuration says.
func stageOthers(ctx context.Context, bin, moduleDir string, env []string, stage string, provs, others []string, log io.Writer) error {
	mirrors, err := MirrorDirs(CLIConfig(env))
	if err != nil {
		return err
	}
	var held []string
	for _, platform := range others {
		missing, err := stagePlatform(mirrors, provs, platform, stage)
		if err != nil {
			return err
		}
		if missing != "" {
			fmt.Fprintf(log, "outpost: providers not vendored for %s (an install runner's platform): %s is in none of the build runner's "+
				"filesystem mirrors %q; its runners install providers as configured (add it: terraform providers mirror -platform=%s DIR)\n",
				platform, missing, mirrors, platform)
			continue
		}
		held = append(held, platform)
	}
	args := []string{"providers", "lock", "-no-color", "-fs-mirror=" + stage, "-platform=" + Platform}
	for _, platform := range held {
		args = append(args, "-platform="+platform)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = moduleDir, env, log, log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("terraform providers lock (the hashes of every platform's providers): %w", err)
	}
	return nil
}

// stagePlatform stages every provider for platform from the mirrors, or
// names the first no mirror holds (and stages none for it).
func stagePlatform(mirrors, provs []string, platform, stage string) (missing string, err error) {
	for _, p := range provs {
		ok, err := fromMirror(mirrors, p, platform, filepath.Join(stage, filepath.FromSlash(p), platform))
		if err != nil {
			return "", fmt.Errorf("provider %s for %s: %w", p, platform, err)
		}
		if !ok {
			for _, q := range provs {
				_ = os.RemoveAll(filepath.Join(stage, filepath.FromSlash(q), platform))
			}
			return p, nil
		}
	}
	return "", nil
}

// pack writes the layer: the lock file, then stage's providers in lexical
// order.
func pack(moduleDir, stage string) (Vendored, error) {
	lock, err := os.ReadFile(filepath.Join(moduleDir, LockFile))
	if err != nil {
		return Vendored{}, err
	}
	dirs, err := filepath.Glob(filepath.Join(stage, "*", "*", "*", "*", "*"))
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
		rel, err := filepath.Rel(stage, d)
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
