package oci

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/ociclient"
)

// sync copies the artifact by digest unless the destination already has
// it, then checks and tags it in the destination.
func (p *plugin) sync(ctx context.Context, log io.Writer, dst *ociclient.Target) (protocol.Artifact, error) {
	return ociclient.Sync(ctx, log, *p.m.Artifact, dst, nil)
}

// syncPlan says what a sync of src into dst would copy, reading only dst:
// nothing when dst holds src's digest whole, else the parts it lacks.
func syncPlan(ctx context.Context, log io.Writer, src protocol.ArtifactRef, dst *ociclient.Target) (protocol.OCISyncPlanOutputs, error) {
	missing, err := dst.Missing(ctx, src.Digest)
	if err != nil {
		return protocol.OCISyncPlanOutputs{}, err
	}
	out := protocol.OCISyncPlanOutputs{HasChanges: len(missing) > 0, Missing: missing,
		Plan: fmt.Sprintf("No changes: %s holds %s whole.\n", dst.Name, src.Digest)}
	if out.HasChanges {
		out.Plan = fmt.Sprintf("%s no longer holds %s whole: a sync copies it again from %s/%s.\nMissing:\n  %s\n",
			dst.Name, src.Digest, src.Registry.Address, src.Repository, strings.Join(missing, "\n  "))
	} else {
		out.Missing = []string{}
	}
	logf(log, "%s", strings.TrimSuffix(out.Plan, "\n"))
	return out, nil
}
