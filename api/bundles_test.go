package api

import (
	"context"
	"crypto/rand"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"

	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/internal/attemptcred"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/releasebundle"
	"github.com/outpost-dev/outpost/runner/ociclient"
	"github.com/outpost-dev/outpost/store"
)

// vendorRegistry gives the API a vendor registry (the embedded one, with
// the control plane's credentials) unless it has one.
func (e *testEnv) vendorRegistry() {
	e.t.Helper()
	if e.srv.registry.Address != "" {
		return
	}
	srv, err := registry.Start(context.Background(), registry.Config{Dir: e.t.TempDir(),
		Auth: registry.Tokens{Keys: attemptcred.RegistryKeys(e.store)}})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { srv.Close() })
	e.srv.registry = protocol.RegistryAccess{Address: srv.Addr(), PlainHTTP: true}
	e.srv.vendorBlobs = srv // as cmd/outpost gives the registry it serves
}

// succeedBuilds pushes an artifact for each queued build of the app to the
// vendor registry and records the build succeeded with it, as the build
// runner would; it returns the builds' components.
func (e *testEnv) succeedBuilds(appID string) []string {
	e.t.Helper()
	return e.succeedBuildsWithImages(appID, nil)
}

// succeedBuildsWithImages is succeedBuilds where a chart's build also
// copies the images listed for its component (an image of one random
// layer for each), as the build runner would beside the chart.
func (e *testEnv) succeedBuildsWithImages(appID string, images map[string][]string) []string {
	e.t.Helper()
	e.vendorRegistry()
	ctx := context.Background()
	var components []string
	for _, b := range e.listBuilds(appID, "") {
		if b.Status != status.BuildQueued {
			continue
		}
		key, err := e.store.SigningKey(ctx, e.org.ID)
		if err != nil {
			e.t.Fatal(err)
		}
		access := e.srv.registry
		access.Username, access.Password = registry.IssueCredential(registry.Key(key), "test",
			[]registry.Scope{{Repository: b.Repository, Actions: []string{"push", "pull"}}}, time.Minute, time.Now())
		repo, err := ociclient.Repository(access, b.Repository)
		if err != nil {
			e.t.Fatal(err)
		}
		art := storeArtifact(e.pushRandom(repo, "application/vnd.test."+b.ComponentType))
		for _, ref := range images[b.Component] {
			parsed, err := name.ParseReference(ref)
			if err != nil {
				e.t.Fatal(err)
			}
			imgRepo := ociclient.RelocatedRepository(b.Repository+"/images", parsed)
			access.Username, access.Password = registry.IssueCredential(registry.Key(key), "test",
				[]registry.Scope{{Repository: imgRepo, Actions: []string{"push", "pull"}}}, time.Minute, time.Now())
			r, err := ociclient.Repository(access, imgRepo)
			if err != nil {
				e.t.Fatal(err)
			}
			m := e.pushRandom(r, ocispec.MediaTypeImageConfig)
			art.Images = append(art.Images, protocol.ArtifactImage{Reference: ref, Repository: imgRepo, Digest: m.Digest.String(), Size: m.Size})
		}
		if err := e.store.FinishBuild(ctx, b.ID, &art, ""); err != nil {
			e.t.Fatal(err)
		}
		components = append(components, b.Component)
	}
	return components
}

func TestReleaseBundleExportVerifiesWithTheOrgsPublicKey(t *testing.T) {
	e := newTestEnv(t)
	w := e.world()
	e.syncConfig(w.app.ID, exampleFiles(t), 201)
	path := "/v1/apps/" + w.app.ID + "/configs/1/bundle"
	e.vendorRegistry()
	// Builds not done yet: refused, naming a component.
	if res := e.send("GET", path, e.token, nil); res.status != http.StatusConflict || !strings.Contains(string(res.body), "component ") {
		t.Fatalf("export before the builds succeeded: %s; want 409 naming a component", res)
	}
	e.call("GET", "/v1/settings/release-key", nil, 404, nil)
	components := e.succeedBuilds(w.app.ID)
	if res := e.send("GET", path, e.token, nil); res.status != http.StatusConflict || !strings.Contains(string(res.body), "no release key") {
		t.Fatalf("export before the org has a release key: %s; want 409 saying so", res)
	}
	e.call("POST", "/v1/settings/release-key", nil, 200, nil)
	res := e.call("GET", path, nil, 200, nil)
	// streamed with its length, not held whole for an ETag
	if n := res.header.Get("Content-Length"); n != strconv.Itoa(len(res.body)) || res.header.Get("ETag") != "" {
		t.Fatalf("Content-Length %q, ETag %q, body of %d bytes", n, res.header.Get("ETag"), len(res.body))
	}
	r, key := e.verifyBundle(res.body)
	e.call("POST", "/v1/settings/release-key", nil, 200, nil) // there already: the same key
	slices.Sort(components)
	slices.Sort(r.Components)
	if r.App != w.app.ID || r.ConfigVersion != "1" || r.KeyID != key.KeyID || !slices.Equal(r.Components, components) ||
		res.header.Get("Outpost-Bundle-Index") != r.Index {
		t.Fatalf("verified %+v; want app %s v1 of components %v signed by %s", r, w.app.ID, components, key.KeyID)
	}
}

// pushRandom pushes a manifest of one random layer to repo.
func (e *testEnv) pushRandom(repo oras.Target, artifactType string) ocispec.Descriptor {
	e.t.Helper()
	layer := make([]byte, 32<<10)
	rand.Read(layer)
	blob, err := oras.PushBytes(context.Background(), repo, ocispec.MediaTypeImageLayerGzip, layer)
	if err != nil {
		e.t.Fatal(err)
	}
	m, err := oras.PackManifest(context.Background(), repo, oras.PackManifestVersion1_1, artifactType,
		oras.PackManifestOptions{Layers: []ocispec.Descriptor{blob}})
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

// verifyBundle verifies an exported bundle with the org's release key.
func (e *testEnv) verifyBundle(bundle []byte) (releasebundle.Report, wire.ReleaseKey) {
	e.t.Helper()
	file := filepath.Join(e.t.TempDir(), "app-1.tar")
	if err := os.WriteFile(file, bundle, 0o600); err != nil {
		e.t.Fatal(err)
	}
	var key wire.ReleaseKey
	e.call("GET", "/v1/settings/release-key", nil, 200, &key)
	pub, err := releasebundle.ParsePublicKeyPEM([]byte(key.PublicKeyPEM))
	if err != nil {
		e.t.Fatal(err)
	}
	r, err := releasebundle.Verify(context.Background(), file, pub)
	if err != nil {
		e.t.Fatal(err)
	}
	return r, key
}

func storeArtifact(m ocispec.Descriptor) store.BuildArtifact {
	return store.BuildArtifact{Digest: m.Digest.String(), MediaType: m.MediaType, ArtifactType: m.ArtifactType, Size: m.Size}
}

// A chart's build that copied the images its component lists: the build's
// record names them, and the export carries each by digest, annotated with
// the image as listed and its chart's component.
func TestReleaseBundleHoldsTheImagesAChartsBuildCopied(t *testing.T) {
	e := newTestEnv(t)
	w := e.world()
	files := exampleFiles(t)
	const nginx = "docker.io/library/nginx:1.27"
	web := strings.Replace(string(files["components/web.toml"].Data), "create_namespace = true\n",
		"create_namespace = true\nrelocate_images = true\nimages = [\""+nginx+"\"]\n", 1)
	files["components/web.toml"] = &fstest.MapFile{Data: []byte(web), Mode: 0o644}
	e.syncConfig(w.app.ID, files, 201)
	e.succeedBuildsWithImages(w.app.ID, map[string][]string{"web": {nginx}})
	var copied []protocol.ArtifactImage
	for _, b := range e.listBuilds(w.app.ID, "") {
		if b.Component == "web" {
			copied = b.Images
		}
	}
	if len(copied) != 1 || copied[0].Reference != nginx || copied[0].Repository != e.org.ID+"/"+w.app.ID+"/images/docker.io/library/nginx" {
		t.Fatalf("web's build lists images %+v; want %s copied beside the chart", copied, nginx)
	}
	e.call("POST", "/v1/settings/release-key", nil, 200, nil)
	res := e.call("GET", "/v1/apps/"+w.app.ID+"/configs/1/bundle", nil, 200, nil)
	r, _ := e.verifyBundle(res.body)
	want := []releasebundle.Image{{Component: "web", Reference: nginx, Digest: copied[0].Digest}}
	if !slices.Equal(r.Images, want) || slices.Contains(r.Components, "") {
		t.Fatalf("the bundle holds images %+v (components %v); want %+v", r.Images, r.Components, want)
	}
}
