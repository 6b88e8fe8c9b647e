package testutil

import (
	"fmt"
	"os/exec"
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
