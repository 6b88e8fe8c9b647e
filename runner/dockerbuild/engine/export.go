package engine

import (
	"context"
	"fmt"
	"io"
	"os"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/moby/moby/client"
)

// save exports the engine's image tag into file (`docker save`) and reads it
// back as an OCI image: OCI manifest, config and layer media types, the
// engine's config (layers' diff IDs, history) unchanged.
func save(ctx context.Context, cli *client.Client, tag, file string) (v1.Image, error) {
	rc, err := cli.ImageSave(ctx, []string{tag})
	if err != nil {
		return nil, fmt.Errorf("exporting %s from the engine: %w", tag, err)
	}
	defer rc.Close()
	f, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	_, err = io.Copy(f, rc)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("exporting %s from the engine: %w", tag, err)
	}
	img, err := tarball.ImageFromPath(file, nil)
	if err != nil {
		return nil, fmt.Errorf("reading the exported image: %w", err)
	}
	return toOCI(img)
}

// toOCI is img with OCI media types.
func toOCI(img v1.Image) (v1.Image, error) {
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("reading the image's config: %w", err)
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, fmt.Errorf("reading the image's layers: %w", err)
	}
	adds := make([]mutate.Addendum, len(layers))
	for i, l := range layers {
		adds[i] = mutate.Addendum{Layer: l, MediaType: types.OCILayer}
	}
	out := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	if out, err = mutate.Append(out, adds...); err != nil {
		return nil, err
	}
	// The engine's config as it is (Append added history entries of its own).
	return mutate.ConfigFile(out, cfg)
}
