package oci

import (
	"context"
	"io"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/ociclient"
)

// sync copies the artifact by digest unless the destination already has
// it, then checks and tags it in the destination.
func (p *plugin) sync(ctx context.Context, log io.Writer, dst *ociclient.Target) (protocol.Artifact, error) {
	return ociclient.Sync(ctx, log, *p.m.Artifact, dst, nil)
}
