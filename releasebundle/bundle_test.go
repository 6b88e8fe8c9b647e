package releasebundle_test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"

	"github.com/outpost-dev/outpost/releasebundle"
	"github.com/outpost-dev/outpost/releasebundle/bundletest"
)

func TestExportedBundleVerifies(t *testing.T) {
	f := bundletest.New(t, 1<<20)
	r, err := releasebundle.Verify(context.Background(), f.Export(t, t.TempDir()), f.Pub)
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
	f := bundletest.New(t, 64<<10)
	t.Run("in a blob", func(t *testing.T) {
		path := f.Export(t, t.TempDir())
		bundletest.Flip(t, path, "", f.Contents.ConfigArchive, 5)
		r := refusal(t, path, f.Pub)
		if !strings.HasPrefix(r.Part, "blob sha256:") || !strings.Contains(r.Reason, "digest is") {
			t.Fatalf("refusal %v; want the changed blob named", r)
		}
	})
	t.Run("in the signature", func(t *testing.T) {
		path := f.Export(t, t.TempDir())
		bundletest.Flip(t, path, `"signature": "`, []byte(`": "`), 10)
		if r := refusal(t, path, f.Pub); r.Part != "signature" {
			t.Fatalf("refusal %v; want the signature named", r)
		}
	})
	t.Run("signed by another key", func(t *testing.T) {
		other, _, _ := ed25519.GenerateKey(rand.Reader)
		r := refusal(t, f.Export(t, t.TempDir()), other)
		if r.Part != "signature" || !strings.Contains(r.Reason, "does not verify") {
			t.Fatalf("refusal %v; want the signature refused", r)
		}
	})
}

func TestBundleFromTheRegistrysStorageIsTheOneOverHTTP(t *testing.T) {
	f := bundletest.New(t, 256<<10)
	local := tarFiles(t, f.Export(t, t.TempDir()))
	remote := tarFiles(t, f.OverHTTP().Export(t, t.TempDir()))
	if !slices.Equal(local, remote) {
		t.Fatalf("the bundle read from storage differs from the one fetched over HTTP:\n%v\n%v", local, remote)
	}
}

// tarFiles lists a tar's files in order, each as its name and its
// content's digest; index.json's manifests sorted (oras-go writes those
// it holds untagged in no set order).
func tarFiles(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var files []string
	for tr := tar.NewReader(f); ; {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Name == ocispec.ImageIndexFile {
			var index ocispec.Index
			if err := json.Unmarshal(raw, &index); err != nil {
				t.Fatal(err)
			}
			slices.SortFunc(index.Manifests, func(a, b ocispec.Descriptor) int { return strings.Compare(string(a.Digest), string(b.Digest)) })
			raw, _ = json.Marshal(index)
		}
		files = append(files, hdr.Name+" "+digest.FromBytes(raw).String())
	}
}

// deleteLayer deletes the first layer of an artifact from the
// registry's repository and returns it.
func deleteLayer(t *testing.T, f bundletest.Fixture, artifact int) ocispec.Descriptor {
	t.Helper()
	ctx := context.Background()
	_, raw, err := oras.FetchBytes(ctx, f.Repo, f.Contents.Artifacts[artifact].Digest, oras.DefaultFetchBytesOptions)
	if err != nil {
		t.Fatal(err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if err := f.Repo.Blobs().Delete(ctx, m.Layers[0]); err != nil {
		t.Fatal(err)
	}
	return m.Layers[0]
}

func TestBundleWriteNamesAMissingBlob(t *testing.T) {
	f := bundletest.New(t, 64<<10)
	layer := deleteLayer(t, f, 1)
	_, err := releasebundle.Write(context.Background(), t.TempDir(), f.Contents, f.Key)
	if err == nil || !strings.Contains(err.Error(), "component api") || !strings.Contains(err.Error(), layer.Digest.String()) {
		t.Fatalf("Write = %v; want an error naming component api and its layer %s", err, layer.Digest)
	}
}

// A blob gone between Write and Tar: Tar fails, having written less than
// Size (an HTTP answer of that Content-Length is seen cut).
func TestBundleTarOfABlobGoneSinceWriteIsCutShort(t *testing.T) {
	f := bundletest.New(t, 64<<10).OverHTTP()
	l, err := releasebundle.Write(context.Background(), t.TempDir(), f.Contents, f.Key)
	if err != nil {
		t.Fatal(err)
	}
	size, err := l.Size()
	if err != nil {
		t.Fatal(err)
	}
	layer := deleteLayer(t, f, 0)
	var out bytes.Buffer
	err = l.Tar(context.Background(), &out)
	if err == nil || !strings.Contains(err.Error(), layer.Digest.Encoded()) || int64(out.Len()) >= size {
		t.Fatalf("Tar = %v after %d of %d bytes; want an error naming %s, short of Size", err, out.Len(), size, layer.Digest)
	}
}
