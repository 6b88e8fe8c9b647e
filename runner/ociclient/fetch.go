package ociclient

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/errcode"

	"github.com/outpost-dev/outpost/protocol"
)

// MaxModuleBytes bounds a terraform module's archive (compressed).
const MaxModuleBytes = 256 << 20

// maxManifestBytes bounds a manifest, as registries do.
const maxManifestBytes = 4 << 20

// FetchTerraformModule returns the module archive (a gzipped tar, as
// protocol.TerraformManifest.Module) of the terraform-module artifact that
// ref names. The manifest and the layer are checked against their digests,
// so what it returns is exactly what was built. Errors name the artifact
// and never carry the credential.
func FetchTerraformModule(ctx context.Context, ref protocol.ArtifactRef) ([]byte, error) {
	scrub := NewScrubber(ref.Registry.Username, ref.Registry.Password)
	module, err := fetchTerraformModule(ctx, ref)
	if err != nil {
		return nil, scrub.Error(fmt.Errorf("terraform module %s/%s@%s: %w", ref.Registry.Address, ref.Repository, ref.Digest, err))
	}
	return module, nil
}

func fetchTerraformModule(ctx context.Context, ref protocol.ArtifactRef) ([]byte, error) {
	repo, err := Repository(ref.Registry, ref.Repository)
	if err != nil {
		return nil, err
	}
	if _, err := digest.Parse(ref.Digest); err != nil {
		return nil, fmt.Errorf("digest: %w", err)
	}
	_, raw, err := FetchManifest(ctx, repo, ref.Digest)
	if err != nil {
		return nil, err
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("reading the manifest: %w", err)
	}
	if m.ArtifactType != protocol.ArtifactTypeTerraformModule {
		return nil, fmt.Errorf("not a terraform module: artifact type %q, want %q", m.ArtifactType, protocol.ArtifactTypeTerraformModule)
	}
	if len(m.Layers) != 1 || m.Layers[0].MediaType != protocol.MediaTypeTerraformModuleLayer {
		return nil, fmt.Errorf("not a terraform module: want one layer of type %q", protocol.MediaTypeTerraformModuleLayer)
	}
	layer := m.Layers[0]
	if layer.Size > MaxModuleBytes {
		return nil, fmt.Errorf("module layer of %d bytes: more than %d", layer.Size, MaxModuleBytes)
	}
	return fetch(ctx, repo, layer)
}

// manifestTypes are the manifests FetchManifest accepts.
var manifestTypes = strings.Join([]string{
	ocispec.MediaTypeImageManifest,
	ocispec.MediaTypeImageIndex,
	"application/vnd.docker.distribution.manifest.v2+json",
	"application/vnd.docker.distribution.manifest.list.v2+json",
}, ", ")

// FetchManifest fetches a manifest by tag or digest and returns its
// descriptor (digest and size of the bytes received, media type from the
// manifest itself) and its bytes. By digest, the bytes are checked against
// it: a registry (or anything between) that answers other bytes is refused
// with both digests named. A refusal carries the registry's answer ("404:
// manifest unknown: …").
func FetchManifest(ctx context.Context, repo *remote.Repository, reference string) (ocispec.Descriptor, []byte, error) {
	scheme := "https"
	if repo.PlainHTTP {
		scheme = "http"
	}
	u := fmt.Sprintf("%s://%s/v2/%s/manifests/%s", scheme, repo.Reference.Host(), repo.Reference.Repository, reference)
	ctx = auth.AppendRepositoryScope(ctx, repo.Reference, auth.ActionPull)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return ocispec.Descriptor{}, nil, err
	}
	req.Header.Set("Accept", manifestTypes)
	resp, err := repo.Client.Do(req)
	if err != nil {
		return ocispec.Descriptor{}, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return ocispec.Descriptor{}, nil, registryError(resp)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxManifestBytes+1))
	switch {
	case err != nil:
		return ocispec.Descriptor{}, nil, fmt.Errorf("manifest %s: %w", reference, err)
	case len(raw) > maxManifestBytes:
		return ocispec.Descriptor{}, nil, fmt.Errorf("manifest %s: more than %d bytes", reference, maxManifestBytes)
	}
	desc := ocispec.Descriptor{MediaType: resp.Header.Get("Content-Type"), Digest: digest.FromBytes(raw), Size: int64(len(raw))}
	if want, err := digest.Parse(reference); err == nil {
		if got := want.Algorithm().FromBytes(raw); got != want {
			return ocispec.Descriptor{}, nil, fmt.Errorf("%s serves a manifest with digest %s for %s", Name(repo), got, want)
		}
		desc.Digest = want
	}
	var m struct {
		MediaType string `json:"mediaType"`
	}
	if json.Unmarshal(raw, &m) == nil && m.MediaType != "" {
		desc.MediaType = m.MediaType
	}
	return desc, raw, nil
}

// registryError is a registry's refusal as oras-go shows it: method, URL,
// status and the registry's own error codes and messages.
func registryError(resp *http.Response) error {
	e := &errcode.ErrorResponse{Method: resp.Request.Method, URL: resp.Request.URL, StatusCode: resp.StatusCode}
	var body struct {
		Errors errcode.Errors `json:"errors"`
	}
	if json.NewDecoder(io.LimitReader(resp.Body, 8<<10)).Decode(&body) == nil {
		e.Errors = body.Errors
	}
	return e
}

// fetch fetches a blob, checked against its descriptor.
func fetch(ctx context.Context, repo *remote.Repository, desc ocispec.Descriptor) ([]byte, error) {
	rc, err := repo.Fetch(ctx, desc)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := content.ReadAll(rc, desc)
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", desc.Digest, err)
	}
	return b, nil
}
