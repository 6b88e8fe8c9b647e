package offline

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/oci"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/releasebundle"
)

// bundle is a verified release bundle, opened: its config version, its
// artifacts' manifests by component, and the images charts' builds copied.
type bundle struct {
	store     *oci.ReadOnlyStore
	cfg       *appconfig.Config
	artifacts map[string]ocispec.Descriptor
	// images are, by component, the images its chart's build copied, by
	// the reference the chart lists.
	images map[string]map[string]ocispec.Descriptor
}

// openBundle reads what the signed index (verified) lists.
func openBundle(ctx context.Context, path string, r releasebundle.Report) (*bundle, error) {
	st, err := oci.NewFromTar(ctx, path)
	if err != nil {
		return nil, err
	}
	index, err := fetchJSON[ocispec.Index](ctx, st, ocispec.Descriptor{MediaType: ocispec.MediaTypeImageIndex, Digest: digest.Digest(r.Index)})
	if err != nil {
		return nil, fmt.Errorf("the bundle's index: %w", err)
	}
	b := &bundle{store: st, artifacts: map[string]ocispec.Descriptor{}, images: map[string]map[string]ocispec.Descriptor{}}
	for _, m := range index.Manifests {
		if c := m.Annotations[releasebundle.AnnotationComponent]; c != "" {
			b.artifacts[c] = m
			continue
		}
		if c := m.Annotations[releasebundle.AnnotationImageComponent]; c != "" {
			if b.images[c] == nil {
				b.images[c] = map[string]ocispec.Descriptor{}
			}
			b.images[c][m.Annotations[releasebundle.AnnotationImage]] = m
			continue
		}
		if m.ArtifactType != releasebundle.ArtifactTypeConfig {
			continue
		}
		if b.cfg, err = readConfig(ctx, st, m); err != nil {
			return nil, fmt.Errorf("the bundle's config version: %w", err)
		}
	}
	if b.cfg == nil {
		return nil, fmt.Errorf("the bundle holds no config version (%s)", releasebundle.ArtifactTypeConfig)
	}
	return b, nil
}

// readConfig loads the config version the manifest holds as its one layer.
func readConfig(ctx context.Context, st content.Fetcher, desc ocispec.Descriptor) (*appconfig.Config, error) {
	m, err := fetchJSON[ocispec.Manifest](ctx, st, desc)
	if err != nil {
		return nil, err
	}
	if len(m.Layers) != 1 || m.Layers[0].MediaType != releasebundle.MediaTypeConfigArchive {
		return nil, fmt.Errorf("manifest %s: want one layer of %s", desc.Digest, releasebundle.MediaTypeConfigArchive)
	}
	archive, err := content.FetchAll(ctx, st, m.Layers[0])
	if err != nil {
		return nil, err
	}
	return appconfig.FromArchive(archive)
}

func fetchJSON[T any](ctx context.Context, st content.Fetcher, desc ocispec.Descriptor) (T, error) {
	var v T
	rc, err := st.Fetch(ctx, desc)
	if err != nil {
		return v, err
	}
	defer rc.Close()
	err = json.NewDecoder(rc).Decode(&v)
	return v, err
}
