package oci

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/ociclient"
)

// target is the destination repository.
type target struct {
	dest protocol.OCIDestination
	repo *remote.Repository
	name string // host/repository, for logs and errors
}

func newTarget(d protocol.OCIDestination) (*target, error) {
	repo, err := ociclient.Repository(d.Registry, d.Repository)
	if err != nil {
		return nil, fmt.Errorf("destination: %w", err)
	}
	return &target{dest: d, repo: repo, name: ociclient.Name(repo)}, nil
}

// has reports whether the destination holds the manifest digest.
func (t *target) has(ctx context.Context, digest string) (bool, error) {
	_, err := t.repo.Resolve(ctx, digest)
	switch {
	case errors.Is(err, errdef.ErrNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("looking for %s in %s: %w", digest, t.name, err)
	}
	return true, nil
}

// copy copies root and everything it references (an index's manifests, a
// manifest's config and layers) from src into the destination, by digest:
// ociclient.Concurrency at a time, each blob streamed from source to
// destination (which checks it against its digest), and whatever the
// destination already has skipped.
func (t *target) copy(ctx context.Context, src content.ReadOnlyStorage, root ocispec.Descriptor) error {
	err := oras.CopyGraph(ctx, src, t.repo, root, oras.CopyGraphOptions{
		Concurrency:    ociclient.Concurrency,
		FindSuccessors: successors,
	})
	if err != nil {
		return fmt.Errorf("copying %s to %s: %w", root.Digest, t.name, err)
	}
	return nil
}

// successors are what a manifest references, read with oras-go's own
// function; a failure (a manifest that is not what its digest says) names
// the manifest.
func successors(ctx context.Context, fetcher content.Fetcher, desc ocispec.Descriptor) ([]ocispec.Descriptor, error) {
	found, err := content.Successors(ctx, fetcher, desc)
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", desc.Digest, err)
	}
	return found, nil
}

// finish checks that the destination serves the manifest digest, then
// points tag (when not empty) at it, and describes the artifact.
func (t *target) finish(ctx context.Context, digest, tag string) (protocol.Artifact, error) {
	desc, raw, err := ociclient.FetchManifest(ctx, t.repo, digest)
	if err != nil {
		return protocol.Artifact{}, fmt.Errorf("checking the destination: %w", err)
	}
	size, artifactType, err := t.describe(ctx, desc, raw)
	if err != nil {
		return protocol.Artifact{}, err
	}
	if tag != "" {
		if err := t.repo.PushReference(ctx, desc, bytes.NewReader(raw), tag); err != nil {
			return protocol.Artifact{}, fmt.Errorf("tagging %s:%s: %w", t.name, tag, err)
		}
	}
	return protocol.Artifact{
		Repository:   t.dest.Repository,
		Digest:       digest,
		MediaType:    desc.MediaType,
		ArtifactType: artifactType,
		Size:         size,
	}, nil
}

// describe returns an artifact's total size (manifests, configs and layers,
// with an index's children) and its artifact type (or config media type).
func (t *target) describe(ctx context.Context, desc ocispec.Descriptor, raw []byte) (int64, string, error) {
	size := desc.Size
	switch desc.MediaType {
	case ocispec.MediaTypeImageIndex, mediaTypeDockerManifestList:
		var idx ocispec.Index
		if err := json.Unmarshal(raw, &idx); err != nil {
			return 0, "", fmt.Errorf("reading index %s of %s: %w", desc.Digest, t.name, err)
		}
		for _, child := range idx.Manifests {
			childDesc, childRaw, err := ociclient.FetchManifest(ctx, t.repo, child.Digest.String())
			if err != nil {
				return 0, "", fmt.Errorf("reading %s of index %s: %w", child.Digest, desc.Digest, err)
			}
			childSize, _, err := t.describe(ctx, childDesc, childRaw)
			if err != nil {
				return 0, "", err
			}
			size += childSize
		}
		return size, idx.ArtifactType, nil
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return 0, "", fmt.Errorf("reading manifest %s of %s: %w", desc.Digest, t.name, err)
	}
	size += m.Config.Size
	for _, l := range m.Layers {
		size += l.Size
	}
	if m.ArtifactType != "" {
		return size, m.ArtifactType, nil
	}
	return size, m.Config.MediaType, nil
}

const mediaTypeDockerManifestList = "application/vnd.docker.distribution.manifest.list.v2+json"
