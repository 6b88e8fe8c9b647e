package ociclient_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"reflect"
	"strings"
	"sync/atomic"
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
func pushModule(t testing.TB, access protocol.RegistryAccess, repository string, archive []byte) protocol.ArtifactRef {
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

func startRegistry(t testing.TB) (*registry.Server, protocol.RegistryAccess) {
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

	install, _ := startRegistry(t)
	// The install's registry behind a proxy that counts the requests that write.
	var writes, manifestPushes, manifestReads atomic.Int32
	target, _ := url.Parse("http://" + install.Addr())
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			writes.Add(1)
		}
		switch manifests := strings.Contains(r.URL.Path, "/manifests/"); {
		case manifests && r.Method == http.MethodPut:
			if strings.Contains(r.URL.Path, "/manifests/sha256:") {
				t.Errorf("manifest pushed to %s, want by its tag", r.URL.Path)
			}
			manifestPushes.Add(1)
		case manifests && r.Method == http.MethodGet:
			manifestReads.Add(1)
		}
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	installAccess := protocol.RegistryAccess{Address: strings.TrimPrefix(front.URL, "http://"), PlainHTTP: true}
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
	pushes, reads := manifestPushes.Load(), manifestReads.Load()
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

	if writes.Load() == 0 {
		t.Fatal("the first sync wrote nothing to the install's registry")
	}
	// The manifest was pushed once, by tag, and not read back.
	if pushes != 1 || reads != 0 {
		t.Errorf("the first sync pushed the manifest %d times and read it %d times, want pushed once (by tag), not read", pushes, reads)
	}

	for _, known := range []*ociclient.Fetched{nil, got} {
		log.Reset()
		writes.Store(0)
		again, err := ociclient.Sync(ctx, &log, ref, dst, known)
		if err != nil || !reflect.DeepEqual(again, art) || !strings.Contains(log.String(), "already holds "+ref.Digest) {
			t.Errorf("sync again: %+v, %v, log %q; want %+v, said to be there already", again, err, log.String(), art)
		}
		if n := writes.Load(); n != 0 {
			t.Errorf("sync again, with the tag naming the digest already: %d requests that write, want none", n)
		}
	}

	// Another tag, where the registry holds the digest: the tag is pushed,
	// nothing else is written.
	v2, err := ociclient.NewTarget(protocol.OCIDestination{Registry: installAccess, Repository: "outpost/web", Tag: "v2"})
	if err != nil {
		t.Fatal(err)
	}
	writes.Store(0)
	manifestPushes.Store(0)
	if again, err := ociclient.Sync(ctx, &log, ref, v2, got); err != nil || !reflect.DeepEqual(again, art) {
		t.Fatalf("sync to another tag: %+v, %v; want %+v", again, err, art)
	}
	if w, p := writes.Load(), manifestPushes.Load(); w != 1 || p != 1 {
		t.Errorf("sync to another tag: %d requests that write, %d manifest pushes; want the one push of the tag", w, p)
	}
	if desc, err := repo.Resolve(ctx, "v2"); err != nil || desc.Digest.String() != ref.Digest {
		t.Errorf("tag v2 resolves to %v (%v), want %s", desc.Digest, err, ref.Digest)
	}
}
