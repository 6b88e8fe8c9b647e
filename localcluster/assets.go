package localcluster

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/outpost-dev/outpost/runner/plugins/toolpath"
)

// KubernetesVersion is the version of kube-apiserver the project builds
// (scripts/tools.sh, tools/kube/go.mod).
const KubernetesVersion = "v1.36.3"

// EnvAssets names a directory holding the etcd and kube-apiserver binaries;
// it overrides the project's own copy.
const EnvAssets = "OUTPOST_KUBE_ASSETS"

// AssetsPath is where scripts/tools.sh builds the binaries, relative to the
// repository root.
var AssetsPath = filepath.Join(".tools", "kube", KubernetesVersion)

// Binaries are the files an assets directory must hold.
var Binaries = []string{"etcd", "kube-apiserver"}

// ErrAssetsNotFound: no directory with etcd and kube-apiserver was found.
var ErrAssetsNotFound = errors.New("no etcd and kube-apiserver binaries found")

// buildHint says how to get the binaries.
const buildHint = "run `bash scripts/tools.sh` in the repository to build them from source (about 18 minutes on two cores with empty Go caches, once), or set " + EnvAssets + " to a directory holding both"

// FindAssets returns the absolute path of the directory holding etcd and
// kube-apiserver:
//
//  1. configured, when set (the BinaryAssetsDir option or OUTPOST_KUBE_ASSETS);
//     a binary missing there is an error, not a reason to look elsewhere;
//  2. AssetsPath in dir or one of its parents.
func FindAssets(configured, dir string) (string, error) {
	if configured != "" {
		abs, err := filepath.Abs(configured)
		if err != nil {
			return "", fmt.Errorf("kube assets directory %s: %w", configured, err)
		}
		if err := checkAssets(abs); err != nil {
			return "", fmt.Errorf("kube assets directory %s (%s): %w (scripts/tools.sh builds both into %s)", abs, EnvAssets, err, AssetsPath)
		}
		return abs, nil
	}
	p, ok, err := toolpath.InParents(dir, AssetsPath, func(p string) bool { return checkAssets(p) == nil })
	switch {
	case err != nil:
		return "", fmt.Errorf("looking for %s: %w", AssetsPath, err)
	case ok:
		return p, nil
	}
	where := dir
	if abs, err := filepath.Abs(dir); err == nil {
		where = abs
	}
	return "", fmt.Errorf("%w: looked for %s/{%s} in %s and its parents; %s",
		ErrAssetsNotFound, AssetsPath, "etcd,kube-apiserver", where, buildHint)
}

// checkAssets says which binary dir lacks.
func checkAssets(dir string) error {
	for _, b := range Binaries {
		if err := toolpath.Executable(filepath.Join(dir, b)); err != nil {
			return fmt.Errorf("%s: %w", b, err)
		}
	}
	return nil
}

// assetsPollInterval is how often WaitForAssets looks again.
var assetsPollInterval = 2 * time.Second

// WaitForAssets is FindAssets, repeated while the binaries are missing (a
// build still under way): every couple of seconds it calls check with the
// time waited so far, and gives up with check's error, joined with
// FindAssets', when check returns one, or when ctx ends.
func WaitForAssets(ctx context.Context, configured, dir string, check func(waited time.Duration) error) (string, error) {
	start := time.Now()
	tick := time.NewTicker(assetsPollInterval)
	defer tick.Stop()
	for {
		p, err := FindAssets(configured, dir)
		if err == nil {
			return p, nil
		}
		if stop := check(time.Since(start)); stop != nil {
			return "", errors.Join(stop, err)
		}
		select {
		case <-ctx.Done():
			return "", errors.Join(ctx.Err(), err)
		case <-tick.C:
		}
	}
}
