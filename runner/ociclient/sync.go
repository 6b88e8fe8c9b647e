package ociclient

import (
	"context"
	"fmt"
	"io"

	"github.com/outpost-dev/outpost/protocol"
)

// Sync copies the artifact src names by digest into dst unless dst already
// holds it, then checks that dst serves that digest and points dst's tag at
// it. It writes what it does to log ("outpost: …" lines, never a
// credential). Errors name the artifact and may carry a credential the
// caller must scrub.
func Sync(ctx context.Context, log io.Writer, src protocol.ArtifactRef, dst *Target) (protocol.Artifact, error) {
	repo, err := Repository(src.Registry, src.Repository)
	if err != nil {
		return protocol.Artifact{}, fmt.Errorf("artifact: %w", err)
	}
	fmt.Fprintf(log, "outpost: sync %s@%s to %s\n", Name(repo), src.Digest, dst.Name)
	present, err := dst.Has(ctx, src.Digest)
	if err != nil {
		return protocol.Artifact{}, err
	}
	if present {
		fmt.Fprintf(log, "outpost: %s already holds %s\n", dst.Name, src.Digest)
	} else {
		root, _, err := FetchManifest(ctx, repo, src.Digest)
		if err != nil {
			return protocol.Artifact{}, fmt.Errorf("artifact %s@%s: %w", Name(repo), src.Digest, err)
		}
		if err := dst.Copy(ctx, repo, root); err != nil {
			return protocol.Artifact{}, err
		}
	}
	return dst.Finish(ctx, src.Digest, dst.Dest.Tag)
}
