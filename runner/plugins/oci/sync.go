package oci

import (
	"context"
	"fmt"
	"io"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/ociclient"
)

// sync copies the artifact by digest unless the destination already has
// it, then checks and tags it in the destination.
func (p *plugin) sync(ctx context.Context, log io.Writer, dst *target) (protocol.Artifact, error) {
	a := p.m.Artifact
	src, err := ociclient.Repository(a.Registry, a.Repository)
	if err != nil {
		return protocol.Artifact{}, fmt.Errorf("artifact: %w", err)
	}
	logf(log, "sync %s@%s to %s", ociclient.Name(src), a.Digest, dst.name)
	present, err := dst.has(ctx, a.Digest)
	if err != nil {
		return protocol.Artifact{}, err
	}
	if present {
		logf(log, "%s already holds %s", dst.name, a.Digest)
	} else {
		root, _, err := ociclient.FetchManifest(ctx, src, a.Digest)
		if err != nil {
			return protocol.Artifact{}, fmt.Errorf("artifact %s@%s: %w", ociclient.Name(src), a.Digest, err)
		}
		if err := dst.copy(ctx, src, root); err != nil {
			return protocol.Artifact{}, err
		}
	}
	return dst.finish(ctx, a.Digest, dst.dest.Tag)
}
