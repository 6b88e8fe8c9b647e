package ociclient

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/outpost-dev/outpost/protocol"
)

// MaxRunnerBinaryBytes bounds a runner binary artifact's layer.
const MaxRunnerBinaryBytes = 512 << 20

// FetchRunnerBinary writes the executable of the runner artifact ref names
// into the file at path (mode 0755), checked against the manifest's digest,
// the layer's and wantBinary (the digest the control plane published); with
// path "" it fetches the manifest only. It returns the release the
// artifact's annotations carry (its signature unchecked: the runner checks
// it), with the binary's digest received. Errors never carry the credential.
func FetchRunnerBinary(ctx context.Context, ref protocol.ArtifactRef, wantBinary, path string) (protocol.RunnerRelease, error) {
	scrub := NewScrubber(ref.Registry.Username, ref.Registry.Password)
	rel, err := fetchRunnerBinary(ctx, ref, wantBinary, path)
	if err != nil {
		if path != "" {
			os.Remove(path)
		}
		return rel, scrub.Error(fmt.Errorf("runner binary %s/%s@%s: %w", ref.Registry.Address, ref.Repository, ref.Digest, err))
	}
	return rel, nil
}

func fetchRunnerBinary(ctx context.Context, ref protocol.ArtifactRef, wantBinary, path string) (protocol.RunnerRelease, error) {
	var rel protocol.RunnerRelease
	repo, err := Repository(ref.Registry, ref.Repository)
	if err != nil {
		return rel, err
	}
	if _, err := digest.Parse(ref.Digest); err != nil {
		return rel, fmt.Errorf("digest: %w", err)
	}
	_, raw, err := FetchManifest(ctx, repo, ref.Digest)
	if err != nil {
		return rel, err
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return rel, fmt.Errorf("reading the manifest: %w", err)
	}
	switch {
	case m.ArtifactType != protocol.ArtifactTypeRunner:
		return rel, fmt.Errorf("not a runner binary: artifact type %q, want %q", m.ArtifactType, protocol.ArtifactTypeRunner)
	case len(m.Layers) != 1 || m.Layers[0].MediaType != protocol.MediaTypeRunnerBinary:
		return rel, fmt.Errorf("not a runner binary: want one layer of type %q", protocol.MediaTypeRunnerBinary)
	case m.Layers[0].Size > MaxRunnerBinaryBytes:
		return rel, fmt.Errorf("binary of %d bytes: more than %d", m.Layers[0].Size, MaxRunnerBinaryBytes)
	case string(m.Layers[0].Digest) != wantBinary:
		return rel, fmt.Errorf("the artifact's binary is %s, the published one %s", m.Layers[0].Digest, wantBinary)
	}
	rel = protocol.RunnerRelease{Version: m.Annotations[protocol.AnnotationRunnerVersion], BinaryDigest: wantBinary,
		ImageDigest: m.Annotations[protocol.AnnotationRunnerImageDigest], Signature: m.Annotations[protocol.AnnotationRunnerSignature]}
	if path == "" {
		return rel, nil
	}
	rc, err := repo.Fetch(ctx, m.Layers[0])
	if err != nil {
		return rel, err
	}
	defer rc.Close()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err != nil {
		return rel, err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(rc, m.Layers[0].Size+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return rel, fmt.Errorf("writing %s: %w", path, err)
	}
	got := "sha256:" + hex.EncodeToString(h.Sum(nil))
	if n != m.Layers[0].Size || got != wantBinary {
		return rel, fmt.Errorf("received %d bytes with digest %s, want %d bytes with %s", n, got, m.Layers[0].Size, wantBinary)
	}
	rel.BinaryDigest = got
	return rel, nil
}
