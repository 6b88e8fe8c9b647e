package providers_test

import (
	"archive/zip"
	"debug/elf"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/internal/testutil/terraformtest"
	"github.com/outpost-dev/outpost/runner/plugins/terraform/providers"
)

const timeModule = `terraform {
  required_providers {
    time = {
      source  = "hashicorp/time"
      version = "~> 0.13"
    }
  }
}
`

// packTimeProvider writes the unpacked provider of platform in mirror as
// the zip "terraform providers mirror" writes (the packed layout), in its
// own mirror, and returns that mirror.
func packTimeProvider(t *testing.T, unpacked, platform string) string {
	t.Helper()
	v := terraformtest.TimeProviderVersion
	mirror := t.TempDir()
	dir := filepath.Join(mirror, "registry.terraform.io", "hashicorp", "time")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "terraform-provider-time_"+v+"_"+platform+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	w, err := zw.Create("terraform-provider-time_v" + v)
	if err != nil {
		t.Fatal(err)
	}
	bin, err := os.Open(filepath.Join(unpacked, "registry.terraform.io/hashicorp/time", v, platform, "terraform-provider-time_v"+v))
	if err != nil {
		t.Fatal(err)
	}
	defer bin.Close()
	if _, err := io.Copy(w, bin); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return mirror
}

// hashicorp/time, built from the Go module proxy for this machine and
// cross-compiled for another platform, is vendored for both: this
// machine's from a filesystem mirror in the unpacked layout, the other's
// from one in the packed layout. The lock file carries both platforms'
// hashes; the other platform's plugin is that platform's executable; this
// machine's runner initialises from the plugin directory alone.
func TestVendorTimeForTwoPlatforms(t *testing.T) {
	if testing.Short() {
		t.Skip("builds hashicorp/time twice")
	}
	bin, other := terraformtest.Find(t), otherPlatform()
	unpacked := t.TempDir()
	terraformtest.BuildTimeProvider(t, unpacked, providers.Platform)
	terraformtest.BuildTimeProvider(t, unpacked, other)
	packed := packTimeProvider(t, unpacked, other)
	// This machine's provider only in the first mirror, the other's only in
	// the second.
	if err := os.RemoveAll(filepath.Join(unpacked, "registry.terraform.io/hashicorp/time", terraformtest.TimeProviderVersion, other)); err != nil {
		t.Fatal(err)
	}
	rc := filepath.Join(t.TempDir(), "build.tfrc")
	cfg := "provider_installation {\n  filesystem_mirror {\n    path = \"" + unpacked + "\"\n  }\n  filesystem_mirror {\n    path = \"" + packed + "\"\n  }\n}\n"
	if err := os.WriteFile(rc, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}

	v := vendorFor(t, bin, rc, timeModule, providers.Platforms(providers.Platform, []string{other}))
	if len(v.Providers) != 2 {
		t.Fatalf("vendored %q, want hashicorp/time for %s and %s", v.Providers, providers.Platform, other)
	}

	plugins, module, err := unpackFor(t, v, timeModule, other)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := elf.Open(filepath.Join(plugins, "registry.terraform.io/hashicorp/time", terraformtest.TimeProviderVersion, other, "terraform-provider-time_v"+terraformtest.TimeProviderVersion))
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Close()
	if want := map[string]elf.Machine{"linux_arm64": elf.EM_AARCH64, "linux_amd64": elf.EM_X86_64}[other]; exe.Machine != want {
		t.Errorf("the %s plugin is built for %v, want %v", other, exe.Machine, want)
	}
	lock, err := os.ReadFile(filepath.Join(module, providers.LockFile))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(lock), `"h1:`); n != 2 {
		t.Errorf("the lock file has %d h1 hashes, want one per platform (2):\n%s", n, lock)
	}

	plugins, module, err = unpackFor(t, v, timeModule, providers.Platform)
	if err != nil {
		t.Fatal(err)
	}
	out := initOffline(t, bin, module, plugins)
	if !strings.Contains(out, "Installed hashicorp/time v"+terraformtest.TimeProviderVersion+" (unauthenticated)") {
		t.Errorf("init:\n%s", out)
	}
}
