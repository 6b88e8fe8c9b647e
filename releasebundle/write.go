package releasebundle

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content/oci"
	"oras.land/oras-go/v2/errdef"
)

// Artifact is a build's artifact to copy into a bundle.
type Artifact struct {
	Component, ComponentType, BuildID string
	// Digest is the artifact's manifest digest; Source holds it (the
	// app's repository in the vendor's registry).
	Digest string
	Source oras.ReadOnlyTarget
}

// Contents is what a bundle holds.
type Contents struct {
	Org, App, AppName string
	ConfigVersion     int
	// ConfigArchive is the config version's directory, a gzipped tar.
	ConfigArchive []byte
	Artifacts     []Artifact
}

// Concurrency is how many blobs an artifact's copy moves at a time.
const Concurrency = 4

// Write builds the bundle's OCI layout in dir (absent or empty), signs its
// index with key, and returns the index's descriptor.
func Write(ctx context.Context, dir string, c Contents, key ed25519.PrivateKey) (ocispec.Descriptor, error) {
	st, err := oci.NewWithContext(ctx, dir)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("bundle layout: %w", err)
	}
	st.AutoSaveIndex = false
	entries := make([]ocispec.Descriptor, 0, len(c.Artifacts)+1)
	for _, a := range c.Artifacts {
		desc, err := copyArtifact(ctx, st, a)
		if err != nil {
			return ocispec.Descriptor{}, err
		}
		entries = append(entries, desc)
	}
	cfg, err := packConfig(ctx, st, c)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	index, err := pushIndex(ctx, st, c, append(entries, cfg))
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	if err := st.SaveIndex(); err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("bundle layout: %w", err)
	}
	return index, writeSignature(dir, index, key)
}

// copyArtifact copies an artifact's graph by digest and returns its
// manifest's descriptor, annotated with its component and build.
func copyArtifact(ctx context.Context, st *oci.Store, a Artifact) (ocispec.Descriptor, error) {
	desc, err := a.Source.Resolve(ctx, a.Digest)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("component %s: artifact %s: %w", a.Component, a.Digest, err)
	}
	if desc.Digest.String() != a.Digest {
		return ocispec.Descriptor{}, fmt.Errorf("component %s: the registry answered %s for %s", a.Component, desc.Digest, a.Digest)
	}
	if err := oras.CopyGraph(ctx, a.Source, st, desc, oras.CopyGraphOptions{Concurrency: Concurrency}); err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("component %s: copying %s: %w", a.Component, a.Digest, err)
	}
	desc.Annotations = map[string]string{AnnotationComponent: a.Component, AnnotationComponentType: a.ComponentType,
		AnnotationBuild: a.BuildID}
	return desc, nil
}

// packConfig stores the config version's archive as an artifact.
func packConfig(ctx context.Context, st *oci.Store, c Contents) (ocispec.Descriptor, error) {
	blob, err := pushBytes(ctx, st, MediaTypeConfigArchive, c.ConfigArchive)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("config version %d: %w", c.ConfigVersion, err)
	}
	desc, err := oras.PackManifest(ctx, st, oras.PackManifestVersion1_1, ArtifactTypeConfig,
		oras.PackManifestOptions{Layers: []ocispec.Descriptor{blob}, ManifestAnnotations: versionAnnotations(c)})
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("config version %d: %w", c.ConfigVersion, err)
	}
	desc.Annotations = versionAnnotations(c)
	return desc, nil
}

func versionAnnotations(c Contents) map[string]string {
	return map[string]string{AnnotationOrg: c.Org, AnnotationApp: c.App, AnnotationAppName: c.AppName,
		AnnotationConfigVersion: strconv.Itoa(c.ConfigVersion), ocispec.AnnotationCreated: "1970-01-01T00:00:00Z"}
}

// pushIndex stores the bundle's index (its root) and tags it RefBundle.
func pushIndex(ctx context.Context, st *oci.Store, c Contents, entries []ocispec.Descriptor) (ocispec.Descriptor, error) {
	index := ocispec.Index{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageIndex,
		ArtifactType: ArtifactTypeBundle, Manifests: entries, Annotations: versionAnnotations(c)}
	raw, err := json.Marshal(index)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("bundle index: %w", err)
	}
	desc, err := pushBytes(ctx, st, ocispec.MediaTypeImageIndex, raw)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("bundle index: %w", err)
	}
	desc.ArtifactType = ArtifactTypeBundle
	if err := st.Tag(ctx, desc, RefBundle); err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("bundle index: %w", err)
	}
	return desc, nil
}

// pushBytes stores a blob, also when an artifact brought it already.
func pushBytes(ctx context.Context, st *oci.Store, mediaType string, data []byte) (ocispec.Descriptor, error) {
	desc, err := oras.PushBytes(ctx, st, mediaType, data)
	if errors.Is(err, errdef.ErrAlreadyExists) {
		err = nil
	}
	return desc, err
}

// writeSignature signs the index's digest into SignatureFile.
func writeSignature(dir string, index ocispec.Descriptor, key ed25519.PrivateKey) error {
	pub, _ := key.Public().(ed25519.PublicKey)
	sig := Signature{Algorithm: "ed25519", KeyID: KeyID(pub), Index: index.Digest.String(),
		Signature: ed25519.Sign(key, Message(index.Digest.String()))}
	raw, err := json.MarshalIndent(sig, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, SignatureFile), append(raw, '\n'), 0o644); err != nil {
		return fmt.Errorf("bundle signature: %w", err)
	}
	return nil
}
