package ociclient

import (
	"bytes"
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

// MaxProvidersBytes bounds a terraform module's providers layer
// (compressed): it is held in memory, as the module is.
const MaxProvidersBytes = 1 << 30

// maxManifestBytes bounds a manifest, as registries do.
const maxManifestBytes = 4 << 20

// FetchTerraformModule returns the module archive (a gzipped tar, as
// protocol.TerraformManifest.Module) of the terraform-module artifact that
// ref names, and what it read (for a Sync of the same artifact, and its
// Providers). The manifest and the layers are checked against their digests, so what it
// returns is exactly what was built. Errors name the artifact and never
// carry the credential.
func FetchTerraformModule(ctx context.Context, ref protocol.ArtifactRef) ([]byte, *Fetched, error) {
	scrub := NewScrubber(ref.Registry.Username, ref.Registry.Password)
	module, got, err := fetchTerraformModule(ctx, ref)
	if err != nil {
		return nil, nil, scrub.Error(fmt.Errorf("terraform module %s/%s@%s: %w", ref.Registry.Address, ref.Repository, ref.Digest, err))
	}
	return module, got, nil
}

func fetchTerraformModule(ctx context.Context, ref protocol.ArtifactRef) ([]byte, *Fetched, error) {
	repo, err := Repository(ref.Registry, ref.Repository)
	if err != nil {
		return nil, nil, err
	}
	if _, err := digest.Parse(ref.Digest); err != nil {
		return nil, nil, fmt.Errorf("digest: %w", err)
	}
	desc, raw, err := FetchManifest(ctx, repo, ref.Digest)
	if err != nil {
		return nil, nil, err
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, nil, fmt.Errorf("reading the manifest: %w", err)
	}
	if m.ArtifactType != protocol.ArtifactTypeTerraformModule {
		return nil, nil, fmt.Errorf("not a terraform module: artifact type %q, want %q", m.ArtifactType, protocol.ArtifactTypeTerraformModule)
	}
	if err := checkModuleLayers(m.Layers); err != nil {
		return nil, nil, fmt.Errorf("not a terraform module: %w", err)
	}
	got := newFetched(desc, raw)
	for i, layer := range m.Layers {
		b, err := fetch(ctx, repo, layer)
		if err != nil {
			return nil, nil, err
		}
		got.blobs[layer.Digest] = b
		if i == 1 {
			got.providers = b
		}
	}
	return got.blobs[m.Layers[0].Digest], got, nil
}

// checkModuleLayers checks a terraform-module artifact's layers: the
// module's, then, optionally, its providers'; each within its bound.
func checkModuleLayers(layers []ocispec.Descriptor) error {
	want := []struct {
		mediaType string
		max       int64
	}{{protocol.MediaTypeTerraformModuleLayer, MaxModuleBytes}, {protocol.MediaTypeTerraformProvidersLayer, MaxProvidersBytes}}
	if len(layers) == 0 || len(layers) > len(want) {
		return fmt.Errorf("want a layer of type %q, then optionally one of type %q; got %d layers", want[0].mediaType, want[1].mediaType, len(layers))
	}
	for i, l := range layers {
		switch {
		case l.MediaType != want[i].mediaType:
			return fmt.Errorf("layer %d: type %q, want %q", i, l.MediaType, want[i].mediaType)
		case l.Size > want[i].max:
			return fmt.Errorf("layer %d of %d bytes: more than %d", i, l.Size, want[i].max)
		}
	}
	return nil
}

// Fetched is what was read of one artifact, each part checked against its
// digest: its manifest and the blobs read. A Sync of that artifact reads
// them from here instead of asking the source registry again.
type Fetched struct {
	Manifest  ocispec.Descriptor
	blobs     map[digest.Digest][]byte // the manifest's bytes too
	providers []byte                   // a terraform module's providers layer, if it has one
}

// Providers is the providers layer of the terraform module fetched (a
// gzipped tar: protocol.MediaTypeTerraformProvidersLayer), or nil when its
// build vendored none.
func (f *Fetched) Providers() []byte {
	if f == nil {
		return nil
	}
	return f.providers
}

func newFetched(manifest ocispec.Descriptor, raw []byte) *Fetched {
	return &Fetched{Manifest: manifest, blobs: map[digest.Digest][]byte{manifest.Digest: raw}}
}

// bytes returns what was read of desc, or the data desc itself carries
// (as a manifest may, for an empty config), or nil.
func (f *Fetched) bytes(desc ocispec.Descriptor) []byte {
	if f == nil {
		return nil
	}
	if b, ok := f.blobs[desc.Digest]; ok && int64(len(b)) == desc.Size {
		return b
	}
	if len(desc.Data) > 0 && int64(len(desc.Data)) == desc.Size && desc.Digest.Validate() == nil &&
		desc.Digest.Algorithm().FromBytes(desc.Data) == desc.Digest {
		return desc.Data
	}
	return nil
}

// readThrough is a source that serves what was fetched already from
// memory and the rest from the registry.
type readThrough struct {
	got  *Fetched
	repo *remote.Repository
}

func (r readThrough) Fetch(ctx context.Context, desc ocispec.Descriptor) (io.ReadCloser, error) {
	if b := r.got.bytes(desc); b != nil {
		return io.NopCloser(bytes.NewReader(b)), nil
	}
	return r.repo.Fetch(ctx, desc)
}

// Resolve resolves the digest of what was fetched to its descriptor, the
// rest from the registry.
func (r readThrough) Resolve(ctx context.Context, reference string) (ocispec.Descriptor, error) {
	if r.got != nil && reference == r.got.Manifest.Digest.String() {
		return r.got.Manifest, nil
	}
	return r.repo.Resolve(ctx, reference)
}

func (r readThrough) Exists(ctx context.Context, desc ocispec.Descriptor) (bool, error) {
	if r.got.bytes(desc) != nil {
		return true, nil
	}
	return r.repo.Exists(ctx, desc)
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
