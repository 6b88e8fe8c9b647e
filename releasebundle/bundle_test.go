package releasebundle_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"slices"
	"strings"
	"testing"

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
