package oci_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/internal/testutil/terraformtest"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/ociclient"
	"github.com/outpost-dev/outpost/runner/plugins/terraform"
	"github.com/outpost-dev/outpost/runner/plugins/terraform/providers"
)

// A module that requires a provider is built with it: the build runner's
// terraform resolves it from the mirror its CLI configuration names, and the
// artifact's second layer holds it; the same module and providers give the
// same digest, and the terraform plugin's fetch hands the layer over.
func TestBuildTerraformModuleVendorsItsProviders(t *testing.T) {
	env := []string{"PATH=" + os.Getenv("PATH"), terraform.EnvTerraform + "=" + terraformtest.Find(t),
		"TF_CLI_CONFIG_FILE=" + terraformtest.FakeProviderMirror(t, providers.Platform)}
	_, access := vendor(t)
	source := testutil.TarGz(t, map[string]string{"main.tf": terraformtest.FakeProviderModule})
	j := mustRun(t, protocol.OCIManifest{Operation: protocol.OCIBuildTerraformModule, Component: "network", Source: source,
		Destination: protocol.OCIDestination{Registry: access, Repository: "org_a/app_1/network", Tag: "build-1"}}, env...)
	if want := "outpost: vendored provider example.com/acme/fake 1.0.0 " + providers.Platform; !strings.Contains(j.logs, want) {
		t.Errorf("the build's log has no %q:\n%s", want, j.logs)
	}
	desc, err := remote.Get(repoOf(t, access, j.artifact.Repository).Digest(j.artifact.Digest), remoteOpts(access)...)
	if err != nil {
		t.Fatal(err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(desc.Manifest, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Layers) != 2 || m.Layers[0].MediaType != protocol.MediaTypeTerraformModuleLayer ||
		m.Layers[1].MediaType != protocol.MediaTypeTerraformProvidersLayer || m.Layers[1].Annotations[ocispec.AnnotationTitle] != "providers.tar.gz" {
		t.Errorf("layers %+v: want the module's, then the providers'", m.Layers)
	}

	ref := protocol.ArtifactRef{Registry: access, Repository: j.artifact.Repository, Digest: j.artifact.Digest}
	module, got, err := ociclient.FetchTerraformModule(t.Context(), ref)
	if err != nil || string(module) != string(source) || int64(len(got.Providers())) != m.Layers[1].Size {
		t.Fatalf("FetchTerraformModule: %v (module %d bytes, providers %d)", err, len(module), len(got.Providers()))
	}

	again := mustRun(t, protocol.OCIManifest{Operation: protocol.OCIBuildTerraformModule, Component: "network", Source: source,
		Destination: protocol.OCIDestination{Registry: access, Repository: "org_a/app_1/network", Tag: "build-2"}}, env...)
	if again.artifact.Digest != j.artifact.Digest {
		t.Errorf("the same module and providers built again: %s, then %s", j.artifact.Digest, again.artifact.Digest)
	}
}
