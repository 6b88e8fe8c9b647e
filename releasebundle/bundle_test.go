package releasebundle_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/releasebundle"
)

// pushArtifact pushes an artifact of one random layer of size bytes to
// repo and returns its manifest's digest.
func pushArtifact(t testing.TB, repo *remote.Repository, artifactType string, size int) string {
	t.Helper()
	ctx := context.Background()
	layer := make([]byte, size)
	rand.Read(layer)
	blob, err := oras.PushBytes(ctx, repo, "application/vnd.oci.image.layer.v1.tar+gzip", layer)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, artifactType,
		oras.PackManifestOptions{Layers: []ocispec.Descriptor{blob}})
	if err != nil {
		t.Fatal(err)
	}
	return desc.Digest.String()
}

// fixture is a vendor registry (the real embedded one, on disk) holding
// an app's artifacts, and what a bundle of them holds.
type fixture struct {
	contents releasebundle.Contents
	key      ed25519.PrivateKey
	pub      ed25519.PublicKey
}

func newFixture(t testing.TB, layerSize int) fixture {
	t.Helper()
	srv, err := registry.Start(context.Background(), registry.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	repo, err := remote.NewRepository(srv.Addr() + "/org_1/app_1")
	if err != nil {
		t.Fatal(err)
	}
	repo.PlainHTTP = true
	pub, key, _ := ed25519.GenerateKey(rand.Reader)
	c := releasebundle.Contents{Org: "org_1", App: "app_1", AppName: "shop", ConfigVersion: 3, ConfigArchive: []byte("a config archive"),
		Artifacts: []releasebundle.Artifact{
			{Component: "network", ComponentType: "terraform_module", BuildID: "bld_1", Source: repo,
				Digest: pushArtifact(t, repo, "application/vnd.outpost.terraform-module.v1", layerSize)},
			{Component: "api", ComponentType: "helm_chart", BuildID: "bld_2", Source: repo,
				Digest: pushArtifact(t, repo, "application/vnd.cncf.helm.config.v1+json", layerSize)},
		}}
	return fixture{contents: c, key: key, pub: pub}
}

// export writes the bundle to a file and returns its path.
func (f fixture) export(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := releasebundle.Write(context.Background(), filepath.Join(dir, "layout"), f.contents, f.key); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(dir, "app-3.tar"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if err := releasebundle.Tar(out, filepath.Join(dir, "layout")); err != nil {
		t.Fatal(err)
	}
	return out.Name()
}

func TestExportedBundleVerifies(t *testing.T) {
	f := newFixture(t, 1<<20)
	path := f.export(t)
	r, err := releasebundle.Verify(context.Background(), path, f.pub)
	if err != nil {
		t.Fatal(err)
	}
	if r.App != "app_1" || r.ConfigVersion != "3" || !slices.Equal(r.Components, []string{"network", "api"}) {
		t.Fatalf("report = %+v", r)
	}
	// the index, 3 manifests (2 artifacts, the config version), their one
	// empty config (shared), 2 layers and the config archive
	if r.Blobs != 8 || r.Bytes < 2<<20 {
		t.Fatalf("blobs %d, bytes %d; want 8 blobs, over 2 MiB", r.Blobs, r.Bytes)
	}
}

// flip changes one byte of the file at offset.
func flip(t *testing.T, path string, offset int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, offset); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x01
	if _, err := f.WriteAt(b, offset); err != nil {
		t.Fatal(err)
	}
}

// offsetOf is where needle starts in the file, after the first match of after.
func offsetOf(t *testing.T, path, after string, needle []byte) int64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	start := bytes.Index(data, []byte(after))
	i := bytes.Index(data[start:], needle)
	if start < 0 || i < 0 {
		t.Fatalf("%q after %q not found in the bundle", needle, after)
	}
	return int64(start + i)
}

func refusal(t *testing.T, path string, pub ed25519.PublicKey) *releasebundle.Refused {
	t.Helper()
	_, err := releasebundle.Verify(context.Background(), path, pub)
	var r *releasebundle.Refused
	if !errors.As(err, &r) {
		t.Fatalf("verify = %v; want a refusal", err)
	}
	return r
}

func TestOneChangedByteIsRefusedNamingWhatFailed(t *testing.T) {
	f := newFixture(t, 64<<10)
	t.Run("in a blob", func(t *testing.T) {
		path := f.export(t)
		flip(t, path, offsetOf(t, path, "", f.contents.ConfigArchive)+5)
		r := refusal(t, path, f.pub)
		if !strings.HasPrefix(r.Part, "blob sha256:") || !strings.Contains(r.Reason, "digest is") {
			t.Fatalf("refusal %v; want the changed blob named", r)
		}
	})
	t.Run("in the signature", func(t *testing.T) {
		path := f.export(t)
		flip(t, path, offsetOf(t, path, `"signature": "`, []byte(`": "`))+10)
		if r := refusal(t, path, f.pub); r.Part != "signature" {
			t.Fatalf("refusal %v; want the signature named", r)
		}
	})
	t.Run("signed by another key", func(t *testing.T) {
		other, _, _ := ed25519.GenerateKey(rand.Reader)
		r := refusal(t, f.export(t), other)
		if r.Part != "signature" || !strings.Contains(r.Reason, "does not verify") {
			t.Fatalf("refusal %v; want the signature refused", r)
		}
	})
}
