package offline

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/google/go-containerregistry/pkg/name"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"
	"oras.land/oras-go/v2/content"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/jobmanifest"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/ociclient"
)

// sync loads every artifact of the bundle into the install's registry (its
// sandbox's outputs name it), by digest into outpost/<component>, as the
// connected module and image syncs copy builds from the vendor's registry:
// each blob checked against its digest by the registry, what it holds
// already skipped. The images a chart's build copied go where the chart's
// relocation puts them (outpost/<component>/images/<host>/<repository>).
func (d *deployment) sync(ctx context.Context, st *protocol.OfflineStep) error {
	if len(d.b.artifacts) == 0 {
		st.Log = "outpost: the bundle holds no build\n"
		return nil
	}
	sandbox, err := d.sandboxOutputs()
	if err != nil {
		return err
	}
	reg, err := jobmanifest.InstallRegistry(sandbox)
	if err != nil {
		return err
	}
	d.registry = &reg
	loads, err := d.b.loadAll(ctx, reg)
	if err != nil {
		return err
	}
	st.Outputs = map[string]any{}
	for _, l := range loads {
		what := l.component
		if l.image != "" {
			what += " image " + l.image
		} else {
			st.Outputs[l.component] = l.name + "@" + l.artifact.Digest
		}
		st.Log += fmt.Sprintf("outpost: loaded %s (%s, %d bytes) into %s\n", what, l.artifact.Digest, l.artifact.Size, l.name)
	}
	return nil
}

// load is one artifact of the bundle and where it goes; once loaded, the
// artifact as the install's registry serves it.
type load struct {
	component, image string // image: as the chart lists it; "" for a build's artifact
	repository, name string
	desc             ocispec.Descriptor
	artifact         protocol.Artifact
}

// loads are the bundle's artifacts, then the charts' images, in the
// components' order.
func (b *bundle) loads() ([]*load, error) {
	var out []*load
	for _, c := range slices.Sorted(maps.Keys(b.artifacts)) {
		out = append(out, &load{component: c, repository: jobmanifest.RepositoryPrefix + c, desc: b.artifacts[c]})
	}
	for _, c := range slices.Sorted(maps.Keys(b.images)) {
		for _, image := range slices.Sorted(maps.Keys(b.images[c])) {
			ref, err := name.ParseReference(image)
			if err != nil {
				return nil, fmt.Errorf("component %s: the bundle's image %q: %w", c, image, err)
			}
			out = append(out, &load{component: c, image: image, desc: b.images[c][image],
				repository: ociclient.RelocatedRepository(jobmanifest.ImagesRepository(c), ref)})
		}
	}
	return out, nil
}

// loadAll loads every artifact into reg, several at once (each blob is
// hashed by the registry as it arrives, which one core alone makes the
// bound), and answers them in loads' order.
func (b *bundle) loadAll(ctx context.Context, reg protocol.RegistryAccess) ([]*load, error) {
	loads, err := b.loads()
	if err != nil {
		return nil, err
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(ociclient.Concurrency)
	for _, l := range loads {
		g.Go(func() error { return l.run(ctx, b.store, reg) })
	}
	return loads, g.Wait()
}

// run copies the artifact into reg and records its repository's name and
// the artifact as the registry serves it.
func (l *load) run(ctx context.Context, src content.ReadOnlyStorage, reg protocol.RegistryAccess) error {
	what := "component " + l.component
	if l.image != "" {
		what += ": image " + l.image
	}
	t, err := ociclient.NewTarget(protocol.OCIDestination{Registry: reg, Repository: l.repository})
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	l.name = t.Name
	if err := t.Copy(ctx, src, l.desc); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if l.artifact, err = t.Finish(ctx, l.desc.Digest.String(), ""); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// sandboxOutputs are the sandbox's outputs as recorded (none before it ran).
func (d *deployment) sandboxOutputs() (map[string]protocol.TerraformOutput, error) {
	var sb protocol.TerraformApplyOutputs
	if raw, ok := d.outputs[status.SandboxStep]; ok {
		if err := json.Unmarshal([]byte(raw), &sb); err != nil {
			return nil, fmt.Errorf("the sandbox's outputs: %w", err)
		}
	}
	return sb.Outputs, nil
}
