package testutil

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/internal/filecopy"
)

// BuildBinaries builds the main packages pkgs (paths as "go build" takes
// them, relative to the test's package) into the existing directory dir,
// each named after its directory. It is for TestMain, which has no
// testing.TB; the error holds the compiler's output. The binaries are linked
// in a directory of the user's cache kept between runs, where go build
// relinks only what changed (a test binary's links are most of a warm run's
// build time), and dir gets hard links to them (or copies).
func BuildBinaries(dir string, pkgs ...string) error {
	kept, unlock, err := keptBinaries(pkgs)
	if err != nil {
		return goBuild(dir, pkgs)
	}
	defer unlock()
	if err := goBuild(kept, pkgs); err != nil {
		return err
	}
	entries, err := os.ReadDir(kept)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Type().IsRegular() {
			if err := linkOrCopy(filepath.Join(kept, e.Name()), filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

func goBuild(dir string, pkgs []string) error {
	args := append([]string{"build", "-o", dir + string(filepath.Separator)}, pkgs...)
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", strings.Join(pkgs, " "), err, out)
	}
	return nil
}

// keptBinaries is the cache directory of these packages built from this
// directory, locked against other test processes until unlock.
func keptBinaries(pkgs []string) (dir string, unlock func(), err error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", nil, err
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", nil, err
	}
	key := sha256.Sum256([]byte(strings.Join(append([]string{wd}, pkgs...), "\x00")))
	dir = filepath.Join(cache, "outpost-test-binaries", hex.EncodeToString(key[:8]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	unlock, err = lockFile(dir + ".lock")
	return dir, unlock, err
}

// linkOrCopy makes dst the file src: a hard link, or a copy where none can be made.
func linkOrCopy(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	return filecopy.File(src, dst, 0o755)
}

// Build builds the main packages pkgs into a temporary directory of the
// test, and returns the directory.
func Build(t testing.TB, pkgs ...string) string {
	t.Helper()
	dir := t.TempDir()
	if err := BuildBinaries(dir, pkgs...); err != nil {
		t.Fatal(err)
	}
	return dir
}

// BuildMain builds the test's own main package as name into a temporary
// directory of the test, and returns the binary's path.
func BuildMain(t testing.TB, name string) string {
	t.Helper()
	return filepath.Join(Build(t, "."), name)
}

// RunWithMain is a TestMain for a command's tests: it builds the test's own
// main package as name, sets *binary to its path, runs the tests and exits
// with their code, the binary removed.
func RunWithMain(m *testing.M, name string, binary *string) {
	os.Exit(runWithMain(m, name, binary))
}

func runWithMain(m *testing.M, name string, binary *string) int {
	dir, err := os.MkdirTemp("", name+"-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	*binary = filepath.Join(dir, name)
	if err := BuildBinaries(dir, "."); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
