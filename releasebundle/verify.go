package releasebundle

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/oci"
)

// Report is what a verified bundle holds.
type Report struct {
	Index         string // the signed index's digest
	KeyID         string
	Org, App      string
	AppName       string
	ConfigVersion string
	// Components are the artifacts' components, in the index's order.
	Components []string
	// Images are the images charts' builds copied, in the index's order.
	Images []Image
	Blobs  int
	Bytes  int64 // of blobs
}

// Image is an image a chart's build copied: its component, the reference
// the chart lists, its manifest's digest.
type Image struct{ Component, Reference, Digest string }

// Refused is why a bundle is refused: Part names what failed (a blob's
// digest, the signature, index.json…).
type Refused struct {
	Part   string
	Reason string
}

func (r *Refused) Error() string { return "bundle refused: " + r.Part + ": " + r.Reason }

func refuse(part, format string, args ...any) error {
	return &Refused{Part: part, Reason: fmt.Sprintf(format, args...)}
}

// Verify checks the bundle file at path against the release public key:
// every blob against its digest, the signature over the index's digest,
// and that every blob the signed index reaches is in the bundle with the
// size its descriptor says. Refusals are *Refused.
func Verify(ctx context.Context, path string, pub ed25519.PublicKey) (Report, error) {
	scan, err := scanTar(path)
	if err != nil {
		return Report{}, err
	}
	sig, err := checkSignature(scan.signature, pub)
	if err != nil {
		return Report{}, err
	}
	st, err := oci.NewFromTar(ctx, path)
	if err != nil {
		return Report{}, refuse(ocispec.ImageIndexFile, "not an OCI image layout: %v", err)
	}
	if tagged, err := st.Resolve(ctx, RefBundle); err != nil || tagged.Digest.String() != sig.Index {
		return Report{}, refuse(ocispec.ImageIndexFile, "its %q tag does not name the signed index %s", RefBundle, sig.Index)
	}
	return walk(ctx, st, scan.blobs, sig)
}

// checkSignature checks the signature file against the release key.
func checkSignature(raw []byte, pub ed25519.PublicKey) (Signature, error) {
	var sig Signature
	if err := json.Unmarshal(raw, &sig); err != nil {
		return sig, refuse("signature", "%s does not read: %v", SignatureFile, err)
	}
	if sig.Algorithm != "ed25519" {
		return sig, refuse("signature", "algorithm %q, not ed25519", sig.Algorithm)
	}
	if _, err := digest.Parse(sig.Index); err != nil {
		return sig, refuse("signature", "index %q: %v", sig.Index, err)
	}
	if !ed25519.Verify(pub, Message(sig.Index), sig.Signature) {
		return sig, refuse("signature", "does not verify with release key %s (the bundle names key %s)", KeyID(pub), sig.KeyID)
	}
	return sig, nil
}

// walk checks that every blob the signed index reaches is in the bundle,
// and reports what it holds.
func walk(ctx context.Context, st content.Fetcher, blobs map[string]int64, sig Signature) (Report, error) {
	root := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageIndex, Digest: digest.Digest(sig.Index), Size: blobs[sig.Index]}
	if _, ok := blobs[sig.Index]; !ok {
		return Report{}, refuse("index "+sig.Index, "the signed index is not in the bundle")
	}
	raw, err := content.FetchAll(ctx, st, root)
	if err != nil {
		return Report{}, refuse("index "+sig.Index, "%v", err)
	}
	var index ocispec.Index
	if err := json.Unmarshal(raw, &index); err != nil || index.ArtifactType != ArtifactTypeBundle {
		return Report{}, refuse("index "+sig.Index, "not a release bundle's index (%s)", ArtifactTypeBundle)
	}
	r := Report{Index: sig.Index, KeyID: sig.KeyID, Org: index.Annotations[AnnotationOrg], App: index.Annotations[AnnotationApp],
		AppName: index.Annotations[AnnotationAppName], ConfigVersion: index.Annotations[AnnotationConfigVersion]}
	for _, m := range index.Manifests {
		if c := m.Annotations[AnnotationComponent]; c != "" {
			r.Components = append(r.Components, c)
		}
		if c := m.Annotations[AnnotationImageComponent]; c != "" {
			r.Images = append(r.Images, Image{Component: c, Reference: m.Annotations[AnnotationImage], Digest: m.Digest.String()})
		}
	}
	seen := map[digest.Digest]bool{}
	if err := reach(ctx, st, blobs, root, seen); err != nil {
		return Report{}, err
	}
	r.Blobs = len(seen)
	for d := range seen {
		r.Bytes += blobs[d.String()]
	}
	return r, nil
}

// reach checks desc and what it references, once each.
func reach(ctx context.Context, st content.Fetcher, blobs map[string]int64, desc ocispec.Descriptor, seen map[digest.Digest]bool) error {
	if seen[desc.Digest] {
		return nil
	}
	size, ok := blobs[desc.Digest.String()]
	if !ok {
		return refuse("blob "+desc.Digest.String(), "referenced (%s) but not in the bundle", desc.MediaType)
	}
	if size != desc.Size {
		return refuse("blob "+desc.Digest.String(), "%d bytes, its descriptor says %d", size, desc.Size)
	}
	seen[desc.Digest] = true
	next, err := content.Successors(ctx, st, desc)
	if err != nil {
		return refuse("blob "+desc.Digest.String(), "%v", err)
	}
	for _, d := range next {
		if err := reach(ctx, st, blobs, d, seen); err != nil {
			return err
		}
	}
	return nil
}
