// Package bundletest makes release bundles for tests and benchmarks: the
// real embedded registry (on disk) holding an app's artifacts of random
// layers, and a release key; and reads what an offline deploy of one
// wrote (its result).
package bundletest

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"os"
	"path/filepath"
	"slices"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/releasebundle"
)

// Fixture is what a bundle of an app's config version 3 holds, and the
// release key that signs it.
type Fixture struct {
	Contents releasebundle.Contents
	Key      ed25519.PrivateKey
	Pub      ed25519.PublicKey
	// Repo is the app's repository in the registry.
	Repo *remote.Repository
}

// New starts a registry and pushes two artifacts of one random layer of
// layerSize bytes each (a terraform module's and a chart's). The artifacts'
// blobs are read from the registry's storage, as by the API of a process
// that serves the registry; OverHTTP reads them over HTTP.
func New(t testing.TB, layerSize int) Fixture {
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
			{Component: "network", ComponentType: "terraform_module", BuildID: "bld_1", Source: repo, Files: srv,
				Digest: push(t, repo, "application/vnd.outpost.terraform-module.v1", layerSize)},
			{Component: "api", ComponentType: "helm_chart", BuildID: "bld_2", Source: repo, Files: srv,
				Digest: push(t, repo, "application/vnd.cncf.helm.config.v1+json", layerSize)},
		}}
	return Fixture{Contents: c, Key: key, Pub: pub, Repo: repo}
}

// OverHTTP is the fixture with its artifacts' blobs fetched over HTTP.
func (f Fixture) OverHTTP() Fixture {
	f.Contents.Artifacts = slices.Clone(f.Contents.Artifacts)
	for i := range f.Contents.Artifacts {
		f.Contents.Artifacts[i].Files = nil
	}
	return f
}

// push pushes an artifact of one random layer and returns its manifest's
// digest.
func push(t testing.TB, repo *remote.Repository, artifactType string, size int) string {
	t.Helper()
	ctx := context.Background()
	layer := make([]byte, size)
	rand.Read(layer)
	blob, err := oras.PushBytes(ctx, repo, ocispec.MediaTypeImageLayerGzip, layer)
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

// Export writes the bundle as dir/app-3.tar, laid out in dir/layout (the
// artifacts' layers streamed from the registry), and returns the tar's
// path.
func (f Fixture) Export(t testing.TB, dir string) string {
	t.Helper()
	l, err := releasebundle.Write(context.Background(), filepath.Join(dir, "layout"), f.Contents, f.Key)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(dir, "app-3.tar"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if err := l.Tar(context.Background(), out); err != nil {
		t.Fatal(err)
	}
	size, err := l.Size()
	if err != nil {
		t.Fatal(err)
	}
	if info, err := out.Stat(); err != nil || info.Size() != size {
		t.Fatalf("the tar: %v (%v); Size said %d bytes", info, err, size)
	}
	return out.Name()
}

// PublicKeyFile writes the release public key as PEM and returns its path.
func (f Fixture) PublicKeyFile(t testing.TB, dir string) string {
	t.Helper()
	pemText, err := releasebundle.PublicKeyPEM(f.Pub)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "release-key.pem")
	if err := os.WriteFile(path, []byte(pemText), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Flip changes one byte of the file: the first byte of needle found after
// the first match of after, moved by skip.
func Flip(t testing.TB, path, after string, needle []byte, skip int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	start := bytes.Index(data, []byte(after))
	i := bytes.Index(data[max(start, 0):], needle)
	if start < 0 || i < 0 {
		t.Fatalf("%q after %q not found in the bundle", needle, after)
	}
	data[start+i+skip] ^= 0x01
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
