package oci

import (
	"context"
	"fmt"
	"io"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/ociclient"
)

// copyChartImages copies each image a chart's build lists, whole and by
// digest, from its own registry into the chart's registry at
// <repository>/images/<source host>/<source repository> (tagged as the
// chart is, when its destination names a tag), so that the build holds
// what the chart runs and a bundle export finds it there.
func (p *plugin) copyChartImages(ctx context.Context, log io.Writer, chart *ociclient.Target) ([]protocol.ArtifactImage, error) {
	var out []protocol.ArtifactImage
	for i, s := range p.m.Images {
		ref, err := name.ParseReference(s)
		if err != nil {
			return nil, fmt.Errorf("images[%d]: %q: %w", i, s, err)
		}
		src, err := ociclient.Repository(ociclient.SourceAccess(ref), ref.Context().RepositoryStr())
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", s, err)
		}
		root, _, err := ociclient.FetchManifest(ctx, src, ref.Identifier())
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", s, err)
		}
		dst, err := ociclient.NewTarget(protocol.OCIDestination{Registry: chart.Dest.Registry,
			Repository: ociclient.RelocatedRepository(chart.Dest.Repository+"/images", ref)})
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", s, err)
		}
		logf(log, "copy image %s (%s) of component %q into %s", s, root.Digest, p.m.Component, dst.Name)
		if err := dst.Copy(ctx, src, root); err != nil {
			return nil, fmt.Errorf("image %s: %w", s, err)
		}
		a, err := dst.Finish(ctx, root.Digest.String(), chart.Dest.Tag)
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", s, err)
		}
		out = append(out, protocol.ArtifactImage{Reference: s, Repository: dst.Dest.Repository, Digest: a.Digest, Size: a.Size})
	}
	return out, nil
}
