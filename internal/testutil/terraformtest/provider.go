package terraformtest

import (
	"os"
	"path/filepath"
	"testing"
)

// FakeProviderModule is a module requiring the provider FakeProviderMirror
// holds.
const FakeProviderModule = `terraform {
  required_providers {
    fake = {
      source  = "example.com/acme/fake"
      version = "1.0.0"
    }
  }
}
`

// FakeProviderMirror writes a terraform filesystem mirror holding a
// stand-in for example.com/acme/fake 1.0.0 built for each of platforms
// ("linux_amd64"; each a different script, so each has its own hash) and a
// CLI configuration naming it, and returns the configuration's path.
// terraform init installs a provider without running it, so the stand-in (a
// script that fails) is enough for init, not for a plan.
func FakeProviderMirror(t testing.TB, platforms ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, platform := range platforms {
		p := filepath.Join(dir, "mirror", "example.com", "acme", "fake", "1.0.0", platform)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		script := "#!/bin/sh\n# " + platform + "\nexit 1\n"
		if err := os.WriteFile(filepath.Join(p, "terraform-provider-fake_v1.0.0"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	rc := filepath.Join(dir, "build.tfrc")
	cfg := "provider_installation {\n  filesystem_mirror {\n    path = \"" + filepath.Join(dir, "mirror") + "\"\n  }\n}\n"
	if err := os.WriteFile(rc, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return rc
}
