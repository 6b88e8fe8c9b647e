package providers

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/outpost-dev/outpost/internal/tarball"
)

// limits bound a providers layer once extracted: provider binaries are
// large (tens to hundreds of MB each).
var limits = tarball.Limits{Files: 10_000, Bytes: 4 << 30, Root: "the providers layer"}

// ErrNoPlatform: the layer holds no provider build for the platform asked.
var ErrNoPlatform = errors.New("not vendored for this platform")

// Platform is this runner's terraform platform ("linux_amd64").
var Platform = runtime.GOOS + "_" + runtime.GOARCH

// Unpack extracts the providers layer into dir and copies its lock file
// into moduleDir (replacing the module's own, which the build's init
// started from). It returns the plugin directory for "init -plugin-dir".
// A layer that holds no provider for platform is an error naming the
// platforms it holds.
func Unpack(layer []byte, dir, moduleDir, platform string) (string, error) {
	if err := tarball.Extract(layer, dir, limits); err != nil {
		return "", fmt.Errorf("providers layer: %w", err)
	}
	plugins := filepath.Join(dir, PluginsDir)
	if err := hasPlatform(plugins, platform); err != nil {
		return "", err
	}
	lock, err := os.ReadFile(filepath.Join(dir, LockFile))
	if err != nil {
		return "", fmt.Errorf("providers layer: %w", err)
	}
	if err := os.WriteFile(filepath.Join(moduleDir, LockFile), lock, 0o644); err != nil {
		return "", err
	}
	return plugins, nil
}

// hasPlatform checks that every provider under plugins has a build for
// platform.
func hasPlatform(plugins, platform string) error {
	versions, err := filepath.Glob(filepath.Join(plugins, "*", "*", "*", "*"))
	if err != nil {
		return err
	}
	for _, v := range versions {
		if fi, err := os.Stat(filepath.Join(v, platform)); err == nil && fi.IsDir() {
			continue
		}
		held, _ := filepath.Glob(filepath.Join(v, "*"))
		for i, h := range held {
			held[i] = filepath.Base(h)
		}
		rel, _ := filepath.Rel(plugins, v)
		return fmt.Errorf("the build vendored provider %s for %v, not for this runner's platform %s: %w", filepath.ToSlash(rel), held, platform, ErrNoPlatform)
	}
	return nil
}
