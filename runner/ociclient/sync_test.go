package ociclient_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/memory"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/runner/ociclient"
)

// pushModule pushes archive as a terraform-module artifact into repository
// and returns where it is.
func pushModule(t *testing.T, access protocol.RegistryAccess, repository string, archive []byte) protocol.ArtifactRef {
	t.Helper()
	ctx := t.Context()
	store := memory.New()
	layer := content.NewDescriptorFromBytes(protocol.MediaTypeTerraformModuleLayer, archive)
	if err := store.Push(ctx, layer, bytes.NewReader(archive)); err != nil {
		t.Fatal(err)
	}
	root, err := oras.PackManifest(ctx, store, oras.PackManifestVersion1_1, protocol.ArtifactTypeTerraformModule,
		oras.PackManifestOptions{Layers: []ocispec.Descriptor{layer}})
	if err != nil {
		t.Fatal(err)
	}
	repo, err := ociclient.Repository(access, repository)
	if err != nil {
		t.Fatal(err)
	}
	if err := oras.CopyGraph(ctx, store, repo, root, oras.DefaultCopyGraphOptions); err != nil {
		t.Fatal(err)
	}
	return protocol.ArtifactRef{Registry: access, Repository: repository, Digest: root.Digest.String()}
}

func startRegistry(t *testing.T) (*registry.Server, protocol.RegistryAccess) {
	t.Helper()
	srv, err := registry.Start(context.Background(), registry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, protocol.RegistryAccess{Address: srv.Addr(), PlainHTTP: true}
}

// A sync of a module the job fetched copies it from memory: the vendor's
// registry is not read again (here it is gone). Once the destination's tag
// names the digest, a sync reads and writes nothing more.
func TestSyncCopiesWhatWasFetched(t *testing.T) {
	ctx := t.Context()
	vendor, vendorAccess := startRegistry(t)
	archive := []byte("not really a gzipped tar, but bytes all the same")
	ref := pushModule(t, vendorAccess, "org/app/web", archive)
	module, got, err := ociclient.FetchTerraformModule(ctx, ref)
	if err != nil || !bytes.Equal(module, archive) {
		t.Fatalf("FetchTerraformModule: %v (%d bytes)", err, len(module))
	}
	vendor.Close()

	_, installAccess := startRegistry(t)
	dst, err := ociclient.NewTarget(protocol.OCIDestination{Registry: installAccess, Repository: "outpost/web", Tag: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	if _, err := ociclient.Sync(ctx, &log, ref, dst, nil); err == nil {
		t.Fatal("a sync without what was fetched succeeded with the vendor's registry gone")
	}
	art, err := ociclient.Sync(ctx, &log, ref, dst, got)
	if err != nil {
		t.Fatalf("Sync with what was fetched: %v\n%s", err, log.String())
	}
	if art.Digest != ref.Digest || art.Repository != "outpost/web" || art.ArtifactType != protocol.ArtifactTypeTerraformModule ||
		art.Size != got.Manifest.Size+int64(len(archive))+int64(len(ocispec.DescriptorEmptyJSON.Data)) {
		t.Errorf("synced %+v; want digest %s, the module's artifact type, size of manifest+config+layer", art, ref.Digest)
	}
	repo, _ := ociclient.Repository(installAccess, "outpost/web")
	if desc, err := repo.Resolve(ctx, "v1"); err != nil || desc.Digest.String() != ref.Digest {
		t.Errorf("tag v1 resolves to %v (%v), want %s", desc.Digest, err, ref.Digest)
	}
	if m, _, err := ociclient.FetchTerraformModule(ctx, protocol.ArtifactRef{Registry: installAccess, Repository: "outpost/web", Digest: ref.Digest}); err != nil || !bytes.Equal(m, archive) {
		t.Errorf("the install's registry serves %d bytes (%v), want the module", len(m), err)
	}

	log.Reset()
	again, err := ociclient.Sync(ctx, &log, ref, dst, nil)
	if err != nil || again != art || !strings.Contains(log.String(), "already holds "+ref.Digest) {
		t.Errorf("second sync: %+v, %v, log %q; want %+v, said to be there already", again, err, log.String(), art)
	}
}
