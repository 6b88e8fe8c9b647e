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
	"sync"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/oci"
	"oras.land/oras-go/v2/errdef"
)

// Artifact is a build's artifact to copy into a bundle.
type Artifact struct {
	Component, ComponentType, BuildID string
	// Image, when set, makes it an image Component's chart build copied,
	// as the chart lists it (AnnotationImage), rather than its artifact.
	Image string
	// Digest is the artifact's manifest digest; Source holds it (the
	// app's repository in the vendor's registry).
	Digest string
	Source oras.ReadOnlyTarget
	// Files, when set, opens Source's blobs from the storage of the
	// registry this process serves, so that Tar reads them from disk
	// rather than over HTTP (Source is still asked first that it holds
	// each). nil: Tar fetches them from Source.
	Files BlobFiles
}

// BlobFiles opens a registry's blobs from its storage (registry.Server).
type BlobFiles interface {
	OpenBlob(digest.Digest) (*os.File, error)
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

// Layout is a bundle ready to stream (Tar): its OCI layout in a directory,
// less the artifacts' blobs other than manifests, which stay in their
// sources until Tar copies them.
type Layout struct {
	// Index is the signed bundle index's descriptor.
	Index ocispec.Descriptor
	dir   string
	// streamed are the blobs Tar copies from the artifacts' sources.
	streamed map[digest.Digest]sourcedBlob
}

// sourcedBlob is a blob Tar copies from its source.
type sourcedBlob struct {
	desc  ocispec.Descriptor
	src   content.Fetcher
	files BlobFiles
}

// Write lays the bundle out in dir (absent or empty): every artifact's
// manifests copied by digest, its other blobs found in its source (by
// HEAD) but left there, the config version, the index and its signature
// by key. A missing artifact or blob is Write's error, before Tar writes
// a byte.
func Write(ctx context.Context, dir string, c Contents, key ed25519.PrivateKey) (*Layout, error) {
	st, err := oci.NewWithContext(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("bundle layout: %w", err)
	}
	st.AutoSaveIndex = false
	l := &Layout{dir: dir, streamed: map[digest.Digest]sourcedBlob{}}
	entries := make([]ocispec.Descriptor, 0, len(c.Artifacts)+1)
	for _, a := range c.Artifacts {
		desc, err := l.copyArtifact(ctx, st, a)
		if err != nil {
			return nil, err
		}
		entries = append(entries, desc)
	}
	cfg, err := packConfig(ctx, st, c)
	if err != nil {
		return nil, err
	}
	if l.Index, err = pushIndex(ctx, st, c, append(entries, cfg)); err != nil {
		return nil, err
	}
	if err := st.SaveIndex(); err != nil {
		return nil, fmt.Errorf("bundle layout: %w", err)
	}
	return l, writeSignature(dir, l.Index, key)
}

// copyArtifact copies an artifact's manifests by digest, records its
// other blobs for Tar once its source has them, and returns its
// manifest's descriptor, annotated with its component and build.
func (l *Layout) copyArtifact(ctx context.Context, st *oci.Store, a Artifact) (ocispec.Descriptor, error) {
	desc, err := a.Source.Resolve(ctx, a.Digest)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("%s: artifact %s: %w", a.what(), a.Digest, err)
	}
	if desc.Digest.String() != a.Digest {
		return ocispec.Descriptor{}, fmt.Errorf("%s: the registry answered %s for %s", a.what(), desc.Digest, a.Digest)
	}
	var mu sync.Mutex
	leave := func(ctx context.Context, blob ocispec.Descriptor) error {
		if isManifest(blob) {
			return nil
		}
		ok, err := a.Source.Exists(ctx, blob)
		if err == nil && !ok {
			err = errdef.ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("blob %s: %w", blob.Digest, err)
		}
		mu.Lock()
		l.streamed[blob.Digest] = sourcedBlob{desc: blob, src: a.Source, files: a.Files}
		mu.Unlock()
		return oras.SkipNode
	}
	opts := oras.CopyGraphOptions{Concurrency: Concurrency, PreCopy: leave}
	if err := oras.CopyGraph(ctx, a.Source, st, desc, opts); err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("%s: copying %s: %w", a.what(), a.Digest, err)
	}
	desc.Annotations = map[string]string{AnnotationComponent: a.Component, AnnotationComponentType: a.ComponentType,
		AnnotationBuild: a.BuildID}
	if a.Image != "" {
		desc.Annotations = map[string]string{AnnotationImageComponent: a.Component, AnnotationImage: a.Image, AnnotationBuild: a.BuildID}
	}
	return desc, nil
}

// what names the artifact in errors: its component (and image).
func (a Artifact) what() string {
	if a.Image != "" {
		return "component " + a.Component + ": image " + a.Image
	}
	return "component " + a.Component
}

// isManifest tells the blobs Write copies (manifests and indexes, which
// the layout's store reads to know the graph) from those Tar streams.
func isManifest(desc ocispec.Descriptor) bool {
	switch desc.MediaType {
	case ocispec.MediaTypeImageManifest, ocispec.MediaTypeImageIndex,
		"application/vnd.docker.distribution.manifest.v2+json", "application/vnd.docker.distribution.manifest.list.v2+json",
		"application/vnd.oci.artifact.manifest.v1+json":
		return true
	}
	return false
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
