package ociclient

import (
	"context"
	"fmt"
	"io"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/outpost-dev/outpost/protocol"
)

// Sync copies the artifact src names by digest into dst unless dst already
// holds it, and points dst's tag at it. got, when not nil, is what the job
// already fetched of that artifact (FetchTerraformModule): it is copied
// from memory rather than read from src's registry again, and dst is not
// asked whether it holds the digest first (the copy skips what dst has). The
// manifest is pushed once, by dst's tag when there is one; oras-go checks
// the digest the registry answers the push with (Docker-Content-Digest),
// when it answers one (distribution and the cloud registries do). When dst's
// tag already names the digest (by the registry's answer to a HEAD), nothing
// is copied or written; without got, the manifest is then fetched from dst
// and checked against the digest. It writes what it does to log
// ("outpost: …" lines, never a credential). Errors name the artifact and may
// carry a credential the caller must scrub.
func Sync(ctx context.Context, log io.Writer, src protocol.ArtifactRef, dst *Target, got *Fetched) (protocol.Artifact, error) {
	repo, err := Repository(src.Registry, src.Repository)
	if err != nil {
		return protocol.Artifact{}, fmt.Errorf("artifact: %w", err)
	}
	fmt.Fprintf(log, "outpost: sync %s@%s to %s\n", Name(repo), src.Digest, dst.Name)
	if got != nil && got.Manifest.Digest.String() != src.Digest {
		got = nil
	}
	if dst.tagNames(ctx, src.Digest) {
		fmt.Fprintf(log, "outpost: %s already holds %s\n", dst.Name, src.Digest)
		if got == nil {
			return dst.Finish(ctx, src.Digest, "")
		}
		return dst.artifact(ctx, got.Manifest, got.bytes(got.Manifest))
	}
	if got == nil {
		present, err := dst.Has(ctx, src.Digest)
		if err != nil {
			return protocol.Artifact{}, err
		}
		if present {
			// Not read from src: the source registry may be gone.
			fmt.Fprintf(log, "outpost: %s already holds %s\n", dst.Name, src.Digest)
			return dst.Finish(ctx, src.Digest, dst.Dest.Tag)
		}
		root, raw, err := FetchManifest(ctx, repo, src.Digest)
		if err != nil {
			return protocol.Artifact{}, fmt.Errorf("artifact %s@%s: %w", Name(repo), src.Digest, err)
		}
		got = newFetched(root, raw)
	}
	var into content.Storage = dst.Repo
	if dst.Dest.Tag != "" {
		into = tagRoot{dst.Repo, got.Manifest, dst.Dest.Tag}
	}
	if err := dst.copyInto(ctx, into, readThrough{got, repo}, got.Manifest); err != nil {
		return protocol.Artifact{}, err
	}
	return dst.artifact(ctx, got.Manifest, got.bytes(got.Manifest))
}

// tagNames says whether dst's tag names the manifest digest. A tag that
// cannot be resolved (not there, or a registry whose answer oras-go does not
// take) counts as not naming it.
func (t *Target) tagNames(ctx context.Context, digest string) bool {
	if t.Dest.Tag == "" {
		return false
	}
	desc, err := t.Repo.Resolve(ctx, t.Dest.Tag)
	return err == nil && desc.Digest.String() == digest
}

// tagRoot is a destination repository into which a copy pushes its root
// manifest by tag, always (whether the repository has the manifest or not:
// the tag must name it), and everything else by digest. oras-go checks the
// registry's answer to each manifest push (Docker-Content-Digest) against
// the digest.
type tagRoot struct {
	repo *remote.Repository
	root ocispec.Descriptor
	tag  string
}

func (t tagRoot) Fetch(ctx context.Context, desc ocispec.Descriptor) (io.ReadCloser, error) {
	return t.repo.Fetch(ctx, desc)
}

func (t tagRoot) Exists(ctx context.Context, desc ocispec.Descriptor) (bool, error) {
	if desc.Digest == t.root.Digest {
		return false, nil
	}
	return t.repo.Exists(ctx, desc)
}

func (t tagRoot) Push(ctx context.Context, desc ocispec.Descriptor, r io.Reader) error {
	if desc.Digest == t.root.Digest {
		return t.repo.PushReference(ctx, desc, r, t.tag)
	}
	return t.repo.Push(ctx, desc, r)
}
