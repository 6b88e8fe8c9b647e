package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/outpost-dev/outpost/protocol"
)

// timeProviderVersion is the hashicorp/time provider the tests build from
// the Go module proxy.
const timeProviderVersion = "0.13.1"

// timeProviderMirror returns a terraform filesystem mirror (unpacked
// layout) holding hashicorp/time for this machine's platform, built from
// the Go module proxy with the local Go toolchain. It is kept under the
// repository's .tools/terraform-providers, so it is built once; when .tools
// cannot be written, in the test's temporary directory (the Go build cache
// keeps that cheap).
func timeProviderMirror(t *testing.T) string {
	t.Helper()
	platform := runtime.GOOS + "_" + runtime.GOARCH
	rel := filepath.Join("registry.terraform.io", "hashicorp", "time", timeProviderVersion, platform)
	root, err := filepath.Abs(filepath.Join("..", ".tools", "terraform-providers"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, rel), 0o755); err != nil {
		t.Logf("cannot cache the provider under .tools (%v): building it into the test's directory", err)
		root = t.TempDir()
		if err := os.MkdirAll(filepath.Join(root, rel), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(root, rel, "terraform-provider-time_v"+timeProviderVersion)
	if _, err := os.Stat(bin); err == nil {
		return root
	}
	gobin := t.TempDir()
	cmd := exec.Command("go", "install", "github.com/hashicorp/terraform-provider-time@v"+timeProviderVersion)
	cmd.Env = append(os.Environ(), "GOBIN="+gobin, "GOTOOLCHAIN=local", "GOFLAGS=-buildvcs=false", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building hashicorp/time v%s: %v\n%s", timeProviderVersion, err, out)
	}
	// Renamed into place: a build cut short leaves no half-written binary.
	if err := os.Rename(filepath.Join(gobin, "terraform-provider-time"), bin); err != nil {
		t.Fatal(err)
	}
	return root
}

// writeTimeApp writes an app with one terraform component whose module
// needs hashicorp/time.
func writeTimeApp(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "app")
	files := map[string]string{
		"outpost.toml":          "[app]\nname = \"demo\"\n\n[sandbox]\nsource = \"sandbox\"\n\n[sandbox.variables]\ninstall_id = \"{{ .install.id }}\"\n",
		"sandbox/main.tf":       "resource \"terraform_data\" \"sandbox\" {\n  input = \"sandbox\"\n}\n",
		"components/clock.toml": "name = \"clock\"\ntype = \"terraform_module\"\nsource = \"modules/clock\"\n",
		"modules/clock/main.tf": `terraform {
  required_providers {
    time = {
      source  = "hashicorp/time"
      version = "~> 0.13"
    }
  }
}

resource "time_static" "started" {}

output "started" {
  value = time_static.started.rfc3339
}
`,
	}
	for p, c := range files {
		writeTestFile(t, filepath.Join(dir, p), c)
	}
	return dir
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A module needing hashicorp/time is built by a build runner whose CLI
// configuration names a filesystem mirror (the only place the provider
// is), and provisions on an install runner with an empty CLI configuration
// and every HTTP(S) request outside this machine sent to a closed port: the
// providers came in the module's artifact, with their lock file.
func TestProvidersVendoredAtBuild(t *testing.T) {
	mirror := timeProviderMirror(t)
	s := newStack(t, stackOptions{})
	dir := t.TempDir()
	buildRC := filepath.Join(dir, "build.tfrc")
	writeTestFile(t, buildRC, "provider_installation {\n  filesystem_mirror {\n    path = \""+mirror+"\"\n  }\n}\n")
	installRC := filepath.Join(dir, "install.tfrc")
	writeTestFile(t, installRC, "")
	s.buildRunner = s.launchRunner("OUTPOST_TOKEN="+s.buildTok, "OUTPOST_TERRAFORM_CLI_CONFIG="+buildRC)
	s.syncConfig(writeTimeApp(t))

	closed := "http://127.0.0.1:9" // the discard port: nothing listens
	inst, _ := s.newInstallWithRunner("cust-offline", []string{"OUTPOST_TERRAFORM_CLI_CONFIG=" + installRC,
		"HTTPS_PROXY=" + closed, "HTTP_PROXY=" + closed, "NO_PROXY=127.0.0.1,localhost"})
	op := s.provisioned(inst, 4*time.Minute)

	outs, err := s.store.ListOutputs(t.Context(), inst)
	if err != nil {
		t.Fatal(err)
	}
	var clock protocol.TerraformApplyOutputs
	if err := json.Unmarshal([]byte(outs["clock"]), &clock); err != nil {
		t.Fatalf("clock's outputs %q: %v", outs["clock"], err)
	}
	started := strings.Trim(string(clock.Outputs["started"].Value), `"`)
	if _, err := time.Parse(time.RFC3339, started); err != nil {
		t.Errorf("output started = %q: want time_static's RFC 3339 time (%v)", started, err)
	}

	log := s.jobLogText(op.step(t, "clock").PlanJobID)
	for _, want := range []string{"those the module's build vendored", "Installed hashicorp/time v" + timeProviderVersion + " (unauthenticated)"} {
		if !strings.Contains(log, want) {
			t.Errorf("the install's job log has no %q:\n%s", want, log)
		}
	}
	for _, unwanted := range []string{"Finding latest version", "signed by", "registry.terraform.io/.well-known", "Failed to query"} {
		if strings.Contains(log, unwanted) {
			t.Errorf("the install's job log has %q: a registry was asked:\n%s", unwanted, log)
		}
	}

	// The install's copy of the build holds the module and its providers.
	addr, auth := s.installRegistryAuth(inst)
	comps := s.installComponentList(inst)
	s.checkInstallRegistryHoldsBuilds(inst, comps)
	ref, err := name.ParseReference(addr+"/outpost/clock@"+comps[0].Digest, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	got, err := remote.Get(ref, remote.WithAuth(auth))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Layers []struct {
			MediaType string `json:"mediaType"`
		} `json:"layers"`
	}
	if err := json.Unmarshal(got.Manifest, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Layers) != 2 || m.Layers[1].MediaType != protocol.MediaTypeTerraformProvidersLayer {
		t.Errorf("the build's layers %+v: want the module's and %s", m.Layers, protocol.MediaTypeTerraformProvidersLayer)
	}
}
