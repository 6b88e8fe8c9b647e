package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BuildBinaries builds the main packages pkgs (paths as "go build" takes
// them, relative to the test's package) into the existing directory dir,
// each named after its directory. It is for TestMain, which has no
// testing.TB; the error holds the compiler's output.
func BuildBinaries(dir string, pkgs ...string) error {
	args := append([]string{"build", "-o", dir}, pkgs...)
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", strings.Join(pkgs, " "), err, out)
	}
	return nil
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
