package providers_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/internal/testutil/terraformtest"
	"github.com/outpost-dev/outpost/runner/plugins/terraform/providers"
)

// otherPlatform is a platform that is not this machine's.
func otherPlatform() string {
	if providers.Platform == "linux_arm64" {
		return "linux_amd64"
	}
	return "linux_arm64"
}

// unpackFor unpacks v for platform into a module with source, returning
// the plugin directory and the module's directory.
func unpackFor(t *testing.T, v providers.Vendored, source, platform string) (string, string, error) {
	t.Helper()
	module := t.TempDir()
	if err := os.WriteFile(filepath.Join(module, "main.tf"), []byte(source), 0o644); err != nil {
		t.Fatal(err)
	}
	plugins, err := providers.Unpack(v.Layer, t.TempDir(), module, platform)
	return plugins, module, err
}

// initOffline runs terraform init from the plugin directory alone, every
// request outside the machine sent to a closed port.
func initOffline(t *testing.T, bin, module, plugins string) string {
	t.Helper()
	empty := filepath.Join(t.TempDir(), "empty.tfrc")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "init", "-input=false", "-no-color", "-plugin-dir="+plugins)
	cmd.Dir = module
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "TF_CLI_CONFIG_FILE=" + empty, "CHECKPOINT_DISABLE=1",
		"HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("init -plugin-dir: %v\n%s", err, out)
	}
	return string(out)
}

// A build asked for another platform too packs that platform's provider
// from the build runner's filesystem mirror, and the lock file carries both
// platforms' hashes; each platform's runner finds its own; a platform no
// mirror holds fails the build, naming it.
func TestVendorForSeveralPlatforms(t *testing.T) {
	bin, other := terraformtest.Find(t), otherPlatform()
	rc := terraformtest.FakeProviderMirror(t, providers.Platform, other)
	v := vendorFor(t, bin, rc, terraformtest.FakeProviderModule, providers.Platforms(providers.Platform, []string{other}))
	want := []string{"example.com/acme/fake 1.0.0 " + providers.Platform, "example.com/acme/fake 1.0.0 " + other}
	slices.Sort(want)
	if !slices.Equal(v.Providers, want) {
		t.Fatalf("vendored %q, want %q", v.Providers, want)
	}

	plugins, module, err := unpackFor(t, v, terraformtest.FakeProviderModule, other)
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(plugins, "example.com/acme/fake/1.0.0", other, "terraform-provider-fake_v1.0.0"))
	if err != nil || !strings.Contains(string(script), other) {
		t.Errorf("the %s plugin: %q, %v", other, script, err)
	}
	lock, err := os.ReadFile(filepath.Join(module, providers.LockFile))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(lock), `"h1:`); n != 2 {
		t.Errorf("the lock file has %d h1 hashes, want one per platform (2):\n%s", n, lock)
	}

	plugins, module, err = unpackFor(t, v, terraformtest.FakeProviderModule, providers.Platform)
	if err != nil {
		t.Fatal(err)
	}
	if out := initOffline(t, bin, module, plugins); !strings.Contains(out, "Installed example.com/acme/fake v1.0.0") {
		t.Errorf("init:\n%s", out)
	}

	if _, _, err := unpackFor(t, v, terraformtest.FakeProviderModule, "plan9_mips"); err == nil ||
		!strings.Contains(err.Error(), "plan9_mips") || !strings.Contains(err.Error(), "["+strings.Join(slices.Sorted(slices.Values([]string{providers.Platform, other})), " ")+"]") {
		t.Errorf("Unpack for plan9_mips: %v, want an error naming it and the platforms the layer holds", err)
	}
}

// A platform no filesystem mirror of the build runner holds is left out of
// the build, said in its log with the provider, the platform and how to add
// it; the build runner's own platform is vendored still.
func TestVendorForAPlatformNoMirrorHolds(t *testing.T) {
	bin := terraformtest.Find(t)
	rc := terraformtest.FakeProviderMirror(t, providers.Platform)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(terraformtest.FakeProviderModule), 0o644); err != nil {
		t.Fatal(err)
	}
	env := providers.TerraformEnv([]string{"PATH=" + os.Getenv("PATH"), "TF_CLI_CONFIG_FILE=" + rc}, "")
	var log strings.Builder
	v, err := providers.Vendor(t.Context(), bin, dir, env, []string{providers.Platform, "freebsd_riscv64"}, &log)
	if err != nil {
		t.Fatalf("Vendor: %v\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "providers not vendored for freebsd_riscv64") ||
		!strings.Contains(log.String(), "example.com/acme/fake/1.0.0 is in none of the build runner's filesystem mirrors") ||
		!strings.Contains(log.String(), "terraform providers mirror -platform=freebsd_riscv64") {
		t.Errorf("the build's log does not say what was left out and how to add it:\n%s", log.String())
	}
	if got := strings.Join(v.Providers, "\n"); !strings.Contains(got, providers.Platform) || strings.Contains(got, "freebsd_riscv64") {
		t.Errorf("vendored: %q, want the build runner's platform only", v.Providers)
	}
}
