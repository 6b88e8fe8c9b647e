package helm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/ociclient"
)

// relocator copies the images a chart runs into the install's registry and
// gives the references the rendered manifests use instead
// (protocol.HelmImages). It remembers what it resolved and copied, so the
// dry run before a deploy and the deploy agree on each image's digest.
type relocator struct {
	spec *protocol.HelmImages
	// listed are the listed images by their normalised name (ggcr's
	// Name(): "index.docker.io/library/nginx:1.27"); nil: none listed.
	listed map[string]name.Reference
	out    io.Writer
	done   map[string]*relocated
	// skipped are the images the manifests name and the list does not.
	skipped map[string]bool
	// bundled are the digests of the images the install's registry holds
	// already, by normalised name (HelmImages.Bundled).
	bundled map[string]string
}

// relocated is one image: where it comes from and where it runs from.
type relocated struct {
	src       *remote.Repository
	desc      ocispec.Descriptor
	tag       string
	repo      string // in the install's registry
	reference string // <install registry>/<repo>@<digest>
	copied    bool   // in the install's registry: copied, or bundled
}

// newRelocator checks spec; nil spec: no relocation.
func newRelocator(spec *protocol.HelmImages) (*relocator, error) {
	if spec == nil {
		return nil, nil
	}
	if err := ociclient.CheckAddress(spec.Registry.Address); err != nil {
		return nil, fmt.Errorf("images.registry.address: %w", err)
	}
	if (spec.Registry.Username == "") != (spec.Registry.Password == "") {
		return nil, errors.New("images.registry: username and password go together")
	}
	if spec.Repository == "" {
		return nil, errors.New("images.repository: required (the prefix of the images' repositories)")
	}
	bundled, err := bundledImages(spec.Bundled)
	if err != nil {
		return nil, err
	}
	r := &relocator{spec: spec, done: map[string]*relocated{}, skipped: map[string]bool{}, bundled: bundled}
	for i, s := range spec.Images {
		ref, err := name.ParseReference(s)
		if err != nil {
			return nil, fmt.Errorf("images.images[%d]: %q: %w", i, s, err)
		}
		if r.listed == nil {
			r.listed = map[string]name.Reference{}
		}
		r.listed[ref.Name()] = ref
	}
	return r, nil
}

// target is where image (as a manifest names it) runs from; "" when it is
// left as it is: already in the install's registry, or not listed.
func (r *relocator) target(ctx context.Context, image string, copy bool) (string, error) {
	ref, err := name.ParseReference(image)
	if err != nil {
		return "", fmt.Errorf("image %q: %w", image, err)
	}
	if ref.Context().RegistryStr() == r.spec.Registry.Address {
		return "", nil
	}
	if r.listed != nil && r.listed[ref.Name()] == nil {
		if r.spec.Offline {
			return "", fmt.Errorf("image %s: the chart runs it but the component's images do not list it, so the bundle "+
				"does not hold it: list it in images (relocate_images = true)", image)
		}
		if !r.skipped[image] {
			r.skipped[image] = true
			fmt.Fprintf(r.out, "outpost: image %s is not in the component's images: left as it is\n", image)
		}
		return "", nil
	}
	rel, err := r.relocate(ctx, ref, copy)
	if err != nil {
		return "", err
	}
	return rel.reference, nil
}

// copyListed copies every listed image, whether the manifests name it or
// not (an operator's own pods may run it).
func (r *relocator) copyListed(ctx context.Context) error {
	for _, k := range slices.Sorted(maps.Keys(r.listed)) {
		if _, err := r.relocate(ctx, r.listed[k], true); err != nil {
			return err
		}
	}
	return nil
}

// relocate resolves ref's digest at its registry and, when copy is true,
// copies the image (every platform of an index) into the install's
// registry.
func (r *relocator) relocate(ctx context.Context, ref name.Reference, copy bool) (*relocated, error) {
	rel := r.done[ref.Name()]
	if rel == nil {
		var err error
		if rel, err = r.resolve(ctx, ref); err != nil {
			return nil, err
		}
		r.done[ref.Name()] = rel
		fmt.Fprintf(r.out, "outpost: image %s is %s: runs as %s\n", ref, rel.desc.Digest, rel.reference)
	}
	if !copy || rel.copied {
		return rel, nil
	}
	dst, err := ociclient.NewTarget(protocol.OCIDestination{Registry: r.spec.Registry, Repository: rel.repo})
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", ref, err)
	}
	if err := dst.Copy(ctx, rel.src, rel.desc); err != nil {
		return nil, fmt.Errorf("image %s: %w", ref, err)
	}
	a, err := dst.Finish(ctx, rel.desc.Digest.String(), rel.tag)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", ref, err)
	}
	rel.copied = true
	fmt.Fprintf(r.out, "outpost: copied image %s (%d bytes) into %s\n", ref, a.Size, dst.Name)
	return rel, nil
}

// resolve reads ref's manifest where the image is — the install's
// registry for a bundled image, else its own registry (checked against the
// digest when ref has one) — and names its place in the install's
// registry. Offline, an image that is not bundled is an error naming it.
func (r *relocator) resolve(ctx context.Context, ref name.Reference) (*relocated, error) {
	rel := &relocated{repo: ociclient.RelocatedRepository(r.spec.Repository, ref)}
	access, repo, ident := ociclient.SourceAccess(ref), ref.Context().RepositoryStr(), ref.Identifier()
	if d, ok := r.bundled[ref.Name()]; ok {
		access, repo, ident, rel.copied = r.spec.Registry, rel.repo, d, true
	} else if r.spec.Offline {
		return nil, fmt.Errorf("image %s: the bundle does not hold it: list it in the component's images "+
			"(relocate_images = true) so that its build copies it into the bundle", ref)
	}
	src, err := ociclient.Repository(access, repo)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", ref, err)
	}
	if rel.desc, _, err = ociclient.FetchManifest(ctx, src, ident); err != nil {
		return nil, fmt.Errorf("image %s: %w", ref, err)
	}
	rel.src = src
	if t, ok := ref.(name.Tag); ok {
		rel.tag = t.TagStr()
	}
	rel.reference = r.spec.Registry.Address + "/" + rel.repo + "@" + rel.desc.Digest.String()
	return rel, nil
}

// bundledImages are HelmImages.Bundled by normalised name.
func bundledImages(in map[string]string) (map[string]string, error) {
	out := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(in)) {
		ref, err := name.ParseReference(k)
		if err != nil {
			return nil, fmt.Errorf("images.bundled: %q: %w", k, err)
		}
		if _, err := digest.Parse(in[k]); err != nil {
			return nil, fmt.Errorf("images.bundled[%q]: %q is not a digest: %w", k, in[k], err)
		}
		out[ref.Name()] = in[k]
	}
	return out, nil
}
