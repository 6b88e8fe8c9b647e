package ociclient

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
)

// Target is the repository a job pushes to (protocol.OCIDestination).
type Target struct {
	Dest protocol.OCIDestination
	Repo *remote.Repository
	Name string // host/repository, for logs and errors
}

// NewTarget opens the destination repository.
func NewTarget(d protocol.OCIDestination) (*Target, error) {
	repo, err := Repository(d.Registry, d.Repository)
	if err != nil {
		return nil, fmt.Errorf("destination: %w", err)
	}
	return &Target{Dest: d, Repo: repo, Name: Name(repo)}, nil
}

// Has reports whether the destination holds the manifest digest.
func (t *Target) Has(ctx context.Context, digest string) (bool, error) {
	_, err := t.Repo.Resolve(ctx, digest)
	switch {
	case errors.Is(err, errdef.ErrNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("looking for %s in %s: %w", digest, t.Name, err)
	}
	return true, nil
}

// Copy copies root and everything it references (an index's manifests, a
// manifest's config and layers) from src into the destination, by digest:
// Concurrency at a time, each blob streamed from source to
// destination (which checks it against its digest), and whatever the
// destination already has skipped.
func (t *Target) Copy(ctx context.Context, src content.ReadOnlyStorage, root ocispec.Descriptor) error {
	return t.copyError(root, oras.CopyGraph(ctx, src, t.Repo, root, copyOptions()))
}

// copyTagged is Copy with the root pushed by tag (by digest when tag is ""), also when the
// destination has it: oras.Copy, which checks the registry's Docker-Content-Digest.
func (t *Target) copyTagged(ctx context.Context, src oras.ReadOnlyTarget, root ocispec.Descriptor, tag string) error {
	_, err := oras.Copy(ctx, src, root.Digest.String(), t.Repo, tag, oras.CopyOptions{CopyGraphOptions: copyOptions()})
	return t.copyError(root, err)
}

// copyOptions: Concurrency blobs at a time; a manifest's successors read
// with successors.
func copyOptions() oras.CopyGraphOptions {
	return oras.CopyGraphOptions{Concurrency: Concurrency, FindSuccessors: successors}
}

func (t *Target) copyError(root ocispec.Descriptor, err error) error {
	if err != nil {
		return fmt.Errorf("copying %s to %s: %w", root.Digest, t.Name, err)
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

// Finish checks that the destination serves the manifest digest, then
// points tag (when not empty) at it, and describes the artifact.
func (t *Target) Finish(ctx context.Context, digest, tag string) (protocol.Artifact, error) {
	desc, raw, err := FetchManifest(ctx, t.Repo, digest)
	if err != nil {
		return protocol.Artifact{}, fmt.Errorf("checking the destination: %w", err)
	}
	if tag != "" {
		if err := t.Repo.PushReference(ctx, desc, bytes.NewReader(raw), tag); err != nil {
			return protocol.Artifact{}, fmt.Errorf("tagging %s:%s: %w", t.Name, tag, err)
		}
	}
	return t.artifact(ctx, desc, raw)
}

// artifact describes the artifact whose manifest (desc, raw) the
// destination holds.
func (t *Target) artifact(ctx context.Context, desc ocispec.Descriptor, raw []byte) (protocol.Artifact, error) {
	size, artifactType, err := t.describe(ctx, desc, raw)
	if err != nil {
		return protocol.Artifact{}, err
	}
	return protocol.Artifact{
		Repository:   t.Dest.Repository,
		Digest:       desc.Digest.String(),
		MediaType:    desc.MediaType,
		ArtifactType: artifactType,
		Size:         size,
	}, nil
}

// describe returns an artifact's total size (manifests, configs and layers,
// with an index's children) and its artifact type (or config media type).
func (t *Target) describe(ctx context.Context, desc ocispec.Descriptor, raw []byte) (int64, string, error) {
	size := desc.Size
	switch desc.MediaType {
	case ocispec.MediaTypeImageIndex, mediaTypeDockerManifestList:
		var idx ocispec.Index
		if err := json.Unmarshal(raw, &idx); err != nil {
			return 0, "", fmt.Errorf("reading index %s of %s: %w", desc.Digest, t.Name, err)
		}
		for _, child := range idx.Manifests {
			childDesc, childRaw, err := FetchManifest(ctx, t.Repo, child.Digest.String())
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
		return 0, "", fmt.Errorf("reading manifest %s of %s: %w", desc.Digest, t.Name, err)
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
