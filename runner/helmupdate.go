package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/outpost-dev/outpost/protocol"
)

// The hand-over in helm mode (Config.Deployment;
// docs/architecture/runner-update.md): the runner patches its own Deployment's image to the
// new version's, a rolling update (the chart's maxUnavailable 0 keeps this
// pod running, its claims stopped). When the new pod is ready, Kubernetes
// stops this one (SIGTERM: Run shuts down as at any stop) and the new runner
// runs the control plane's health job. When this runner is still running at
// the deadline, the rollout did not become healthy: it patches the previous
// image back (a "rollout undo"), reports the rollback and claims again.
// outpost-runner-helm does the Kubernetes calls: this binary links no
// Kubernetes client.

// rollDeployment returns why the rollout failed, once the Deployment is
// back on the previous image; "" when the runner was stopped meanwhile.
func (r *Runner) rollDeployment(ctx context.Context, m protocol.RunnerUpdateManifest, imageDigest string, deadline time.Duration) string {
	prev, err := r.deploymentImage(ctx, "")
	if err != nil {
		return fmt.Sprintf("reading the runner's Deployment %s: %v", r.cfg.Deployment, err)
	}
	next := imageByDigest(prev, imageDigest)
	if _, err := r.deploymentImage(ctx, next); err != nil {
		return fmt.Sprintf("rolling the Deployment %s to %s: %v", r.cfg.Deployment, next, err)
	}
	r.log.Info("runner update: Deployment rolling to the new image; this pod runs until the new one is ready",
		"deployment", r.cfg.Deployment, "image", next, "previous", prev, "deadline", deadline)
	timer := time.NewTimer(deadline)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return "" // stopped: Kubernetes replaces this pod with the new one
	case <-timer.C:
	}
	undo, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	reason := fmt.Sprintf("the Deployment's new pod (image %s) did not become ready within %s", next, deadline)
	if _, err := r.deploymentImage(undo, prev); err != nil {
		return fmt.Sprintf("%s, and restoring the previous image %s failed: %v", reason, prev, err)
	}
	return reason + "; the Deployment is back on " + prev
}

// deploymentImage runs "outpost-runner-helm deployment-image": it returns
// the runner container's image, after setting it to set when not "".
func (r *Runner) deploymentImage(ctx context.Context, set string) (string, error) {
	bin := r.cfg.jobExecutables[protocol.JobTypeHelm]
	if bin == "" {
		return "", fmt.Errorf("no %s to reach the cluster with", HelmJobBinary)
	}
	args := []string{"deployment-image", "--deployment", r.cfg.Deployment}
	if set != "" {
		args = append(args, "--set", set)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = os.Environ(), &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(stdout.String()), nil
}

// imageByDigest is image (a reference with a tag or digest) pinned to
// digest: the runner image of a release is the running image's repository
// at the digest the release's signature covers, never a mutable tag.
func imageByDigest(image, digest string) string {
	repo, _, _ := strings.Cut(image, "@")
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	return repo + "@" + digest
}
