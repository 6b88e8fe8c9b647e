package ociclient_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/runner/ociclient"
)

func TestScrubber(t *testing.T) {
	s := ociclient.NewScrubber("u", "secret", "v", "")
	basic := base64.StdEncoding.EncodeToString([]byte("u:secret"))
	got := s.String("a secret, Basic " + basic + ", and v's empty password")
	if want := "a [redacted], Basic [redacted], and v's empty password"; got != want {
		t.Errorf("scrubbed %q, want %q", got, want)
	}
}

func TestFetchTerraformModuleRefusesOtherArtifacts(t *testing.T) {
	srv, err := registry.Start(t.Context(), registry.Config{Auth: registry.Static{Username: "u", Password: "fetch-secret"}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	access := protocol.RegistryAccess{Address: srv.Addr(), Username: "u", Password: "fetch-secret", PlainHTTP: true}
	img, _ := random.Image(100, 1)
	ref, _ := name.ParseReference(srv.Addr()+"/app/web:v1", name.Insecure)
	if err := remote.Write(ref, img, remote.WithAuth(&authn.Basic{Username: "u", Password: "fetch-secret"})); err != nil {
		t.Fatal(err)
	}
	digest, _ := img.Digest()

	_, _, err = ociclient.FetchTerraformModule(t.Context(), protocol.ArtifactRef{Registry: access, Repository: "app/web", Digest: digest.String()})
	if err == nil || !strings.Contains(err.Error(), "not a terraform module") || !strings.Contains(err.Error(), digest.String()) {
		t.Errorf("fetching an image as a module: %v", err)
	}

	access.Password = "wrong-secret"
	_, _, err = ociclient.FetchTerraformModule(t.Context(), protocol.ArtifactRef{Registry: access, Repository: "app/web", Digest: digest.String()})
	if err == nil || !strings.Contains(err.Error(), "response status code 401: unauthorized") || strings.Contains(err.Error(), "wrong-secret") {
		t.Errorf("fetching with a wrong password: %v", err)
	}
}
