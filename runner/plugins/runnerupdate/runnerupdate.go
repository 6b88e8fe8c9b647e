package runnerupdate

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/ociclient"
	"github.com/outpost-dev/outpost/runner/plugins"
)

// StagedSuffix is added to the runner's path to name the staged binary.
const StagedSuffix = ".new"

// EnvDeployment is set in the job's environment when the runner runs as a
// Kubernetes Deployment (NAMESPACE/NAME): the runner then updates by rolling
// the Deployment's image, and there is no binary to stage.
const EnvDeployment = "OUTPOST_DEPLOYMENT"

// New returns a runner_update plugin for one job.
func New() plugins.Plugin { return &plugin{} }

type plugin struct {
	m   protocol.RunnerUpdateManifest
	out protocol.RunnerUpdateOutputs
}

func (p *plugin) Validate(manifest json.RawMessage) error {
	if err := plugins.DecodeManifest(manifest, &p.m); err != nil {
		return err
	}
	switch {
	case p.m.UpdateID == "":
		return fmt.Errorf("update_id: required")
	case p.m.Version == "":
		return fmt.Errorf("version: required")
	case !strings.HasPrefix(p.m.BinaryDigest, "sha256:"):
		return fmt.Errorf("binary_digest: must be a sha256 digest, got %q", p.m.BinaryDigest)
	case p.m.Binary.Repository == "" || p.m.Binary.Digest == "":
		return fmt.Errorf("binary: repository and digest are required")
	}
	return nil
}

// Execute stages the binary next to the runner (this job process is the
// runner's own binary, re-executed) and reports the release the artifact
// carries, whose signature the runner checks before it switches. A runner
// in a Deployment stages nothing: it reads the release only.
func (p *plugin) Execute(ctx context.Context, run plugins.Run) (int, error) {
	if d := os.Getenv(EnvDeployment); d != "" {
		rel, err := ociclient.FetchRunnerBinary(ctx, p.m.Binary, p.m.BinaryDigest, "")
		if err != nil {
			return 0, err
		}
		fmt.Fprintf(run.Stdout, "the runner runs as Deployment %s: it rolls the Deployment to the image of runner %s (%s) once this job ends, if its signature verifies\n",
			d, p.m.Version, orNone(rel.ImageDigest))
		p.out = protocol.RunnerUpdateOutputs{Release: rel}
		return 0, nil
	}
	self, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("finding the runner binary: %w", err)
	}
	staged := self + StagedSuffix
	fmt.Fprintf(run.Stdout, "downloading runner %s (%s) from %s/%s\n", p.m.Version, p.m.BinaryDigest, p.m.Binary.Registry.Address, p.m.Binary.Repository)
	rel, err := ociclient.FetchRunnerBinary(ctx, p.m.Binary, p.m.BinaryDigest, staged)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(run.Stdout, "staged %s (%s); the runner hands over to it once this job ends, if its signature verifies\n", staged, rel.BinaryDigest)
	p.out = protocol.RunnerUpdateOutputs{Staged: staged, Digest: rel.BinaryDigest, Release: rel}
	return 0, nil
}

func orNone(digest string) string {
	if digest == "" {
		return "no image digest"
	}
	return digest
}

func (p *plugin) Outputs() (json.RawMessage, error) { return json.Marshal(p.out) }

func (p *plugin) Cleanup() error { return nil }
