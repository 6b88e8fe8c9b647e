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
// from memory rather than read from src's registry again. When dst's tag
// already names the digest, nothing is copied or written (the manifest is
// still fetched back and checked). It writes what it does to log
// ("outpost: …" lines, never a credential). Errors name the artifact and
// may carry a credential the caller must scrub.
func Sync(ctx context.Context, log io.Writer, src protocol.ArtifactRef, dst *Target, got *Fetched) (protocol.Artifact, error) {
	repo, err := Repository(src.Registry, src.Repository)
	if err != nil {
		return protocol.Artifact{}, fmt.Errorf("artifact: %w", err)
	}
	fmt.Fprintf(log, "outpost: sync %s@%s to %s\n", Name(repo), src.Digest, dst.Name)
	tagged, present, err := dst.holds(ctx, src.Digest)
	if err != nil {
		return protocol.Artifact{}, err
	}
	if present {
		fmt.Fprintf(log, "outpost: %s already holds %s\n", dst.Name, src.Digest)
		tag := dst.Dest.Tag
		if tagged {
			tag = "" // it names the digest already
		}
		return dst.Finish(ctx, src.Digest, tag)
	}
	if got == nil || got.Manifest.Digest.String() != src.Digest {
		root, raw, err := FetchManifest(ctx, repo, src.Digest)
		if err != nil {
			return protocol.Artifact{}, fmt.Errorf("artifact %s@%s: %w", Name(repo), src.Digest, err)
		}
		got = newFetched(root, raw)
	}
	if err := dst.Copy(ctx, readThrough{got, repo}, got.Manifest); err != nil {
		return protocol.Artifact{}, err
	}
	return dst.Finish(ctx, src.Digest, dst.Dest.Tag)
}

// holds says whether the destination's tag names the manifest digest
// (tagged; then it holds it) and whether it holds it (present). A tag that
// cannot be resolved (not there, or a registry whose answer oras-go does
// not take) counts as not naming it.
func (t *Target) holds(ctx context.Context, digest string) (tagged, present bool, err error) {
	if t.Dest.Tag != "" {
		if desc, err := t.Repo.Resolve(ctx, t.Dest.Tag); err == nil && desc.Digest.String() == digest {
			return true, true, nil
		}
	}
	present, err = t.Has(ctx, digest)
	return false, present, err
}
