package terraformtest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TimeProviderVersion is the hashicorp/time provider BuildTimeProvider
// builds.
const TimeProviderVersion = "0.13.1"

// BuildTimeProvider builds hashicorp/time from the Go module proxy, with the
// local Go toolchain, for platform ("linux_arm64": Go cross-compiles it) into
// mirror, a terraform filesystem mirror in the unpacked layout, unless it is
// there already.
func BuildTimeProvider(t testing.TB, mirror, platform string) {
	t.Helper()
	dir := filepath.Join(mirror, "registry.terraform.io", "hashicorp", "time", TimeProviderVersion, platform)
	bin := filepath.Join(dir, "terraform-provider-time_v"+TimeProviderVersion)
	if _, err := os.Stat(bin); err == nil {
		return
	}
	env := append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=-buildvcs=false", "CGO_ENABLED=0")
	out, err := exec.Command("go", "mod", "download", "-json", "github.com/hashicorp/terraform-provider-time@v"+TimeProviderVersion).Output()
	if err != nil {
		t.Fatalf("downloading hashicorp/time v%s: %v", TimeProviderVersion, err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatal(err)
	}
	goos, goarch, _ := strings.Cut(platform, "_")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := bin + ".partial"
	build := exec.Command("go", "build", "-o", tmp, ".")
	build.Dir, build.Env = mod.Dir, append(env, "GOOS="+goos, "GOARCH="+goarch)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building hashicorp/time v%s for %s: %v\n%s", TimeProviderVersion, platform, err, out)
	}
	// Renamed into place: a build cut short leaves no half-written binary.
	if err := os.Rename(tmp, bin); err != nil {
		t.Fatal(err)
	}
}
