package ociclient_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/memory"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/runner/ociclient"
)

// A runner binary is written only when it is the one published: its bytes
// are checked against the manifest's layer and the published digest; what
// is not a runner artifact is refused, and nothing is left at the path.
func TestFetchRunnerBinaryChecksTheDigest(t *testing.T) {
	srv, err := registry.Start(t.Context(), registry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	bin := []byte("#!/bin/sh\necho runner\n")
	manifest := pushArtifact(t, srv.Addr(), protocol.ArtifactTypeRunner, protocol.MediaTypeRunnerBinary, bin)
	module := pushArtifact(t, srv.Addr(), protocol.ArtifactTypeTerraformModule, protocol.MediaTypeTerraformModuleLayer, bin)
	ref := protocol.ArtifactRef{Registry: protocol.RegistryAccess{Address: srv.Addr(), PlainHTTP: true}, Repository: "outpost/runner"}
	path := filepath.Join(t.TempDir(), "outpost-runner.new")
	published := digest.FromBytes(bin).String()

	ref.Digest = manifest
	got, err := ociclient.FetchRunnerBinary(t.Context(), ref, published, path)
	if b, _ := os.ReadFile(path); err != nil || got.BinaryDigest != published || !bytes.Equal(b, bin) {
		t.Fatalf("fetch: %+v, %v; file %q", got, err, b)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o755 {
		t.Errorf("mode %v, want 0755", fi.Mode().Perm())
	}
	other := digest.FromString("another binary").String()
	for _, tc := range []struct{ manifest, want, err string }{
		{manifest, other, "the published one " + other},
		{module, published, "not a runner binary"},
	} {
		os.Remove(path)
		ref.Digest = tc.manifest
		if _, err := ociclient.FetchRunnerBinary(t.Context(), ref, tc.want, path); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("fetch %s as %s: %v, want %q", tc.manifest, tc.want, err, tc.err)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("a refused binary was left at %s: %v", path, err)
		}
	}
}

// pushArtifact pushes data as the one layer of an artifact into
// outpost/runner and returns the manifest's digest.
func pushArtifact(t *testing.T, addr, artifactType, layerType string, data []byte) string {
	t.Helper()
	ctx := t.Context()
	mem := memory.New()
	layer := content.NewDescriptorFromBytes(layerType, data)
	if err := mem.Push(ctx, layer, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	m, err := oras.PackManifest(ctx, mem, oras.PackManifestVersion1_1, artifactType, oras.PackManifestOptions{Layers: []ocispec.Descriptor{layer}})
	if err != nil {
		t.Fatal(err)
	}
	repo, err := remote.NewRepository(addr + "/outpost/runner")
	if err != nil {
		t.Fatal(err)
	}
	repo.PlainHTTP = true
	if err := oras.CopyGraph(ctx, mem, repo, m, oras.DefaultCopyGraphOptions); err != nil {
		t.Fatal(err)
	}
	return m.Digest.String()
}
