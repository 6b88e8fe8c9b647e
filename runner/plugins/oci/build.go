package oci

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"helm.sh/helm/v3/pkg/chart/loader"
	helmregistry "helm.sh/helm/v3/pkg/registry"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/memory"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/ociclient"
	"github.com/outpost-dev/outpost/runner/plugins"
)

// created is the creation time recorded in built artifacts: fixed, so the
// same source gives the same digest.
const created = "1970-01-01T00:00:00Z"

// moduleLayerTitle names the module layer (its org.opencontainers.image.title).
const moduleLayerTitle = "module.tar.gz"

// providersLayerTitle names the providers layer, when the build vendored
// the module's providers.
const providersLayerTitle = "providers.tar.gz"

// buildTerraformModule pushes the module archive as the first layer of a
// terraform-module artifact, and its vendored providers as the second when
// the module needs any (providers.go).
func (p *plugin) buildTerraformModule(ctx context.Context, log io.Writer, run plugins.Run, dst *ociclient.Target) (protocol.Artifact, error) {
	m := &p.m
	logf(log, "build terraform module of component %q (%d bytes) into %s", m.Component, len(m.Source), dst.Name)
	vendored, err := p.vendorProviders(ctx, log, run)
	if err != nil {
		return protocol.Artifact{}, fmt.Errorf("vendoring the module's providers: %w", err)
	}
	store := memory.New()
	var layers []ocispec.Descriptor
	for _, l := range []struct {
		mediaType, title string
		data             []byte
	}{{protocol.MediaTypeTerraformModuleLayer, moduleLayerTitle, m.Source}, {protocol.MediaTypeTerraformProvidersLayer, providersLayerTitle, vendored}} {
		if l.data == nil {
			continue
		}
		layer := content.NewDescriptorFromBytes(l.mediaType, l.data)
		layer.Annotations = map[string]string{ocispec.AnnotationTitle: l.title}
		if err := store.Push(ctx, layer, bytes.NewReader(l.data)); err != nil {
			return protocol.Artifact{}, err
		}
		layers = append(layers, layer)
	}
	manifest, err := oras.PackManifest(ctx, store, oras.PackManifestVersion1_1, protocol.ArtifactTypeTerraformModule,
		oras.PackManifestOptions{
			Layers: layers,
			ManifestAnnotations: map[string]string{
				ocispec.AnnotationCreated:    created,
				protocol.AnnotationComponent: m.Component,
			},
		})
	if err != nil {
		return protocol.Artifact{}, fmt.Errorf("packing the module's manifest: %w", err)
	}
	if err := dst.Copy(ctx, store, manifest); err != nil {
		return protocol.Artifact{}, err
	}
	return dst.Finish(ctx, manifest.Digest.String(), dst.Dest.Tag)
}

// buildHelmChart packages the chart directory with helm and pushes it with
// helm's registry client.
func (p *plugin) buildHelmChart(ctx context.Context, log io.Writer, dir string, dst *ociclient.Target) (protocol.Artifact, error) {
	m := &p.m
	chartDir := filepath.Join(dir, "chart")
	if err := extractArchive(m.Source, chartDir); err != nil {
		return protocol.Artifact{}, fmt.Errorf("source: %w", err)
	}
	chart, err := loader.LoadDir(chartDir)
	if err != nil {
		return protocol.Artifact{}, fmt.Errorf("source: loading the chart: %w", err)
	}
	pkgDir := filepath.Join(dir, "package")
	if err := os.MkdirAll(pkgDir, 0o700); err != nil {
		return protocol.Artifact{}, err
	}
	pkg, err := p.saveChart(chart, pkgDir)
	if err != nil {
		return protocol.Artifact{}, fmt.Errorf("packaging chart %s: %w", chart.Name(), err)
	}
	raw, err := os.ReadFile(pkg)
	if err != nil {
		return protocol.Artifact{}, err
	}
	data, err := normaliseArchive(raw)
	if err != nil {
		return protocol.Artifact{}, fmt.Errorf("packaging chart %s: %w", chart.Name(), err)
	}
	tag := dst.Dest.Tag
	if tag == "" {
		tag = strings.ReplaceAll(chart.Metadata.Version, "+", "_") // what helm itself does in OCI tags
	}
	logf(log, "build helm chart %s %s of component %q into %s:%s", chart.Name(), chart.Metadata.Version, m.Component, dst.Name, tag)

	access := dst.Dest.Registry
	opts := []helmregistry.ClientOption{
		helmregistry.ClientOptWriter(log),
		// A file of the job's own: no user's helm or docker login is read or written.
		helmregistry.ClientOptCredentialsFile(filepath.Join(dir, "helm-registry-config.json")),
		helmregistry.ClientOptEnableCache(true),
		helmregistry.ClientOptHTTPClient(&http.Client{Transport: contextTransport{ctx, http.DefaultTransport}}),
	}
	if access.Username != "" || access.Password != "" {
		opts = append(opts, helmregistry.ClientOptBasicAuth(access.Username, access.Password))
	}
	if access.PlainHTTP {
		opts = append(opts, helmregistry.ClientOptPlainHTTP())
	}
	client, err := helmregistry.NewClient(opts...)
	if err != nil {
		return protocol.Artifact{}, fmt.Errorf("helm registry client: %w", err)
	}
	// The images first: a build that fails on one leaves no chart tagged.
	images, err := p.copyChartImages(ctx, log, dst)
	if err != nil {
		return protocol.Artifact{}, err
	}
	res, err := client.Push(data, dst.Name+":"+tag,
		helmregistry.PushOptStrictMode(false), helmregistry.PushOptCreationTime(created))
	if err != nil {
		return protocol.Artifact{}, fmt.Errorf("pushing chart %s to %s:%s: %w", chart.Name(), dst.Name, tag, err)
	}
	// helm tagged it already.
	art, err := dst.Finish(ctx, res.Manifest.Digest, "")
	art.Images = images
	return art, err
}

// contextTransport binds requests to ctx: helm's registry client makes its
// requests without one, and a cancelled job must stop them.
type contextTransport struct {
	ctx  context.Context
	base http.RoundTripper
}

func (t contextTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return t.base.RoundTrip(r.WithContext(t.ctx))
}

// buildContainerImage copies the external image, whole, into the
// destination, pinned by its digest.
func (p *plugin) buildContainerImage(ctx context.Context, log io.Writer, dst *ociclient.Target) (protocol.Artifact, error) {
	img := p.m.Image
	ref, err := imageReference(*img)
	if err != nil {
		return protocol.Artifact{}, fmt.Errorf("image.reference: %w", err)
	}
	src, err := ociclient.Repository(protocol.RegistryAccess{
		Address: ref.Context().RegistryStr(), Username: img.Username, Password: img.Password, PlainHTTP: img.PlainHTTP,
	}, ref.Context().RepositoryStr())
	if err != nil {
		return protocol.Artifact{}, fmt.Errorf("image.reference: %w", err)
	}
	// By tag, the digest is that of the manifest received; by digest, the
	// manifest is checked against it.
	root, _, err := ociclient.FetchManifest(ctx, src, ref.Identifier())
	if err != nil {
		return protocol.Artifact{}, fmt.Errorf("image %s: %w", img.Reference, err)
	}
	logf(log, "copy image %s (%s) of component %q into %s", img.Reference, root.Digest, p.m.Component, dst.Name)
	if err := dst.Copy(ctx, src, root); err != nil {
		return protocol.Artifact{}, err
	}
	return dst.Finish(ctx, root.Digest.String(), dst.Dest.Tag)
}
