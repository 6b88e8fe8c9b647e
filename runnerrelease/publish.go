package runnerrelease

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"fmt"
	"os"
	"regexp"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/memory"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/store"
)

// Repository holds every runner binary in the vendor's registry, tagged
// with its version.
const Repository = registry.Shared + "runner"

// versionPattern is what a runner version may be: a tag.
var versionPattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$`)

// CheckVersion says whether v can name a runner version (an OCI tag).
func CheckVersion(v string) error {
	if !versionPattern.MatchString(v) {
		return fmt.Errorf("version %q: letters, digits, '.', '_' and '-', at most 100, not starting with '.' or '-'", v)
	}
	return nil
}

// Registry is the vendor's registry as the control plane reaches it.
type Registry struct {
	Address   string
	PlainHTTP bool
}

// Release is what is published as one runner version.
type Release struct {
	Version string
	// Binary is the path of the runner executable.
	Binary string
	// ImageDigest is the runner image's digest ("sha256:…"), which a
	// runner in a Kubernetes Deployment rolls to; "" when there is none.
	ImageDigest string
	// Key signs the release (the version, the binary's and the image's
	// digests); nil publishes it unsigned, and every runner refuses it.
	Key ed25519.PrivateKey
}

// Publish pushes the release's executable as runner version into the
// vendor's registry (a push credential issued from the store's registry
// key), its signed release in the manifest's annotations, and records it.
// The same version published again with the same artifact is a no-op; with
// another it fails (store.ErrConflict).
func Publish(ctx context.Context, s *store.Store, reg Registry, rel Release) (store.RunnerVersion, error) {
	version, path := rel.Version, rel.Binary
	if err := CheckVersion(version); err != nil {
		return store.RunnerVersion{}, err
	}
	if err := checkImageDigest(rel.ImageDigest); err != nil {
		return store.RunnerVersion{}, err
	}
	bin, err := os.ReadFile(path)
	if err != nil {
		return store.RunnerVersion{}, fmt.Errorf("runner binary: %w", err)
	}
	key, err := s.SigningKey(ctx, store.PlatformKeys)
	if err != nil {
		return store.RunnerVersion{}, err
	}
	user, pass := registry.IssueCredential(registry.Key(key), "runner-publish", []registry.Scope{{Repository: Repository, Actions: []string{"pull", "push"}}}, 10*time.Minute, time.Now())
	repo, err := remote.NewRepository(reg.Address + "/" + Repository)
	if err != nil {
		return store.RunnerVersion{}, err
	}
	repo.PlainHTTP = reg.PlainHTTP
	repo.Client = &auth.Client{Cache: auth.NewCache(),
		Credential: auth.StaticCredential(reg.Address, auth.Credential{Username: user, Password: pass})}

	mem := memory.New()
	layer := content.NewDescriptorFromBytes(protocol.MediaTypeRunnerBinary, bin)
	layer.Annotations = map[string]string{ocispec.AnnotationTitle: "outpost-runner"}
	if err := mem.Push(ctx, layer, bytes.NewReader(bin)); err != nil {
		return store.RunnerVersion{}, err
	}
	annotations := map[string]string{protocol.AnnotationRunnerVersion: version, ocispec.AnnotationCreated: "1970-01-01T00:00:00Z"}
	signed := protocol.RunnerRelease{Version: version, BinaryDigest: layer.Digest.String(), ImageDigest: rel.ImageDigest}
	if rel.ImageDigest != "" {
		annotations[protocol.AnnotationRunnerImageDigest] = rel.ImageDigest
	}
	if rel.Key != nil {
		annotations[protocol.AnnotationRunnerSignature] = Sign(signed, rel.Key).Signature
	}
	manifest, err := oras.PackManifest(ctx, mem, oras.PackManifestVersion1_1, protocol.ArtifactTypeRunner, oras.PackManifestOptions{
		Layers:              []ocispec.Descriptor{layer},
		ManifestAnnotations: annotations,
	})
	if err != nil {
		return store.RunnerVersion{}, fmt.Errorf("packing the manifest: %w", err)
	}
	if err := mem.Tag(ctx, manifest, version); err != nil {
		return store.RunnerVersion{}, err
	}
	if _, err := oras.Copy(ctx, mem, version, repo, version, oras.DefaultCopyOptions); err != nil {
		return store.RunnerVersion{}, fmt.Errorf("pushing to %s/%s: %w", reg.Address, Repository, err)
	}
	return s.PublishRunnerVersion(ctx, store.RunnerVersion{Version: version, Repository: Repository,
		Digest: manifest.Digest.String(), BinaryDigest: layer.Digest.String(), Size: layer.Size})
}
