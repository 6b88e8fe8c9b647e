package ociclient

import (
	"context"
	"fmt"
	"io"

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
	if err := dst.copyTagged(ctx, readThrough{got, repo}, got.Manifest, dst.Dest.Tag); err != nil {
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
