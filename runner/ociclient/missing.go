package ociclient

import (
	"context"
	"errors"
	"fmt"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/errdef"
)

// Missing lists what the destination lacks of the artifact whose manifest
// digest names: the manifest itself ("manifest sha256:…"), or what it
// references, an index's manifests and their own parts, a manifest's config
// and layers ("blob sha256:…"). None: it serves the artifact whole. It reads
// manifests and asks for blobs (HEAD) only; errors may carry a credential
// the caller must scrub.
func (t *Target) Missing(ctx context.Context, digest string) ([]string, error) {
	desc, err := t.Repo.Resolve(ctx, digest)
	switch {
	case errors.Is(err, errdef.ErrNotFound):
		return []string{"manifest " + digest}, nil
	case err != nil:
		return nil, fmt.Errorf("looking for %s in %s: %w", digest, t.Name, err)
	}
	return t.missingUnder(ctx, desc)
}

// missingUnder lists what the destination lacks of what desc, a manifest
// it holds, references.
func (t *Target) missingUnder(ctx context.Context, desc ocispec.Descriptor) ([]string, error) {
	children, err := successors(ctx, t.Repo, desc)
	if err != nil {
		return nil, fmt.Errorf("reading %s in %s: %w", desc.Digest, t.Name, err)
	}
	var out []string
	for _, c := range children {
		if isManifest(c.MediaType) {
			more, err := t.Missing(ctx, c.Digest.String())
			if err != nil {
				return nil, err
			}
			out = append(out, more...)
			continue
		}
		_, err := t.Repo.Blobs().Resolve(ctx, c.Digest.String())
		switch {
		case errors.Is(err, errdef.ErrNotFound):
			out = append(out, "blob "+c.Digest.String())
		case err != nil:
			return nil, fmt.Errorf("looking for blob %s in %s: %w", c.Digest, t.Name, err)
		}
	}
	return out, nil
}

// isManifest says a descriptor's media type is a manifest's or an index's
// (OCI or Docker's), which registries serve under /manifests/.
func isManifest(mediaType string) bool {
	switch mediaType {
	case ocispec.MediaTypeImageManifest, ocispec.MediaTypeImageIndex, mediaTypeDockerManifestList,
		"application/vnd.docker.distribution.manifest.v2+json":
		return true
	}
	return false
}
