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
// stand-in for example.com/acme/fake 1.0.0 built for platform ("linux_amd64")
// and a CLI configuration naming it, and returns the configuration's path.
// terraform init installs a provider without running it, so the stand-in (a
// script that fails) is enough for init, not for a plan.
func FakeProviderMirror(t testing.TB, platform string) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "mirror", "example.com", "acme", "fake", "1.0.0", platform)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p, "terraform-provider-fake_v1.0.0"), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	rc := filepath.Join(dir, "build.tfrc")
	cfg := "provider_installation {\n  filesystem_mirror {\n    path = \"" + filepath.Join(dir, "mirror") + "\"\n  }\n}\n"
	if err := os.WriteFile(rc, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return rc
}
