package activities

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/store"
)

// buildJobTimeout bounds one build or sync job on a runner.
const buildJobTimeout = 30 * time.Minute

// buildStore is what the build activities read and write of the store.
type buildStore interface {
	GetBuildByID(ctx context.Context, buildID string) (store.Build, error)
	QueueBuilds(ctx context.Context, orgID, appID string, configVersion int, specs []store.BuildSpec) ([]store.Build, []bool, error)
	StartBuild(ctx context.Context, buildID, jobID string) error
	FinishBuild(ctx context.Context, buildID string, art *store.BuildArtifact, errMsg string) error
	SubscribeBuild(buildID string) (<-chan struct{}, func())
	EnsureBuildRunner(ctx context.Context, orgID string) (store.Runner, error)
	AppRunnerPlatforms(ctx context.Context, orgID, appID string) ([]string, error)
	EnqueueJob(ctx context.Context, spec store.JobSpec) (store.Job, bool, error)
	UpdateStep(ctx context.Context, opID, name string, change store.StepChange) error
}

// Builds are the activities of a build: its job on the org's build runner
// and its end, and how a step finds (or queues) the build it deploys.
type Builds struct {
	store      buildStore
	render     *renderer
	steps      *stepJobs
	artifacts  *artifacts
	awaitCheck time.Duration
}

func summarize(b store.Build) contract.BuildSummary {
	return contract.BuildSummary{BuildID: b.ID, Status: b.Status, Digest: b.Digest, Error: b.Error}
}

// EnqueueBuildJob renders a build's job — the component's source or image,
// and a credential that may push to the org's repositories only — and
// queues it on the org's build runner. Idempotent by key.
func (a *Builds) EnqueueBuildJob(ctx context.Context, buildID, key string) (contract.JobRef, error) {
	b, err := a.store.GetBuildByID(ctx, buildID)
	if err != nil {
		return contract.JobRef{}, err
	}
	m, err := a.buildManifest(ctx, b)
	if err != nil {
		return contract.JobRef{}, err
	}
	raw, err := manifest(m)
	if err != nil {
		return contract.JobRef{}, err
	}
	r, err := a.store.EnsureBuildRunner(ctx, b.OrgID)
	if err != nil {
		return contract.JobRef{}, err
	}
	typ := protocol.JobTypeOCI
	switch m.Operation { // in outpost-runner-helm: helm's SDK, the Docker client
	case protocol.OCIBuildHelmChart:
		typ = protocol.JobTypeHelmChart
	case protocol.OCIBuildDockerImage:
		typ = protocol.JobTypeDockerImage
	}
	j, created, err := a.store.EnqueueJob(ctx, store.JobSpec{Key: key, OrgID: b.OrgID, RunnerID: r.ID,
		Type: typ, Manifest: raw, TimeoutMS: buildJobTimeout.Milliseconds()})
	if err != nil {
		return contract.JobRef{}, err
	}
	if err := a.store.StartBuild(ctx, b.ID, j.ID); err != nil {
		return contract.JobRef{}, err
	}
	return contract.JobRef{JobID: j.ID, Created: created}, nil
}

// buildManifest is a build's job: the component's source in the build's
// config version (which must still be the build's), and where it goes.
func (a *Builds) buildManifest(ctx context.Context, b store.Build) (protocol.OCIManifest, error) {
	cfg, _, err := a.render.installConfig(ctx, b.OrgID, b.AppID, b.ConfigVersion)
	if err != nil {
		return protocol.OCIManifest{}, err
	}
	in, err := cfg.BuildInput(b.Component)
	if err != nil {
		return protocol.OCIManifest{}, invalidConfig(err)
	}
	if in.Digest != b.SourceDigest {
		return protocol.OCIManifest{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"build %s: the source of %s in config version %d is %s, not the build's %s", b.ID, b.Component, b.ConfigVersion, in.Digest, b.SourceDigest), "SourceChanged", nil)
	}
	op, err := buildOperation(b.ComponentType)
	if err != nil {
		return protocol.OCIManifest{}, invalidConfig(err)
	}
	dest, err := a.artifacts.vendorAccess(ctx, b.OrgID, "build/"+b.ID, registry.Scope{Repository: b.OrgID + "/", Actions: []string{"pull", "push"}})
	if err != nil {
		return protocol.OCIManifest{}, err
	}
	m := protocol.OCIManifest{Operation: op, Component: b.Component, Source: in.Source,
		Destination: protocol.OCIDestination{Registry: dest, Repository: b.Repository, Tag: b.Tag}}
	switch op {
	case protocol.OCIBuildContainerImage:
		m.Image = &protocol.OCIImageSource{Reference: in.Image, PlainHTTP: in.PlainHTTP}
	case protocol.OCIBuildDockerImage:
		m.Docker = dockerBuild(in)
	case protocol.OCIBuildHelmChart:
		m.Images = in.Images
	case protocol.OCIBuildTerraformModule:
		if m.Platforms, err = a.store.AppRunnerPlatforms(ctx, b.OrgID, b.AppID); err != nil {
			return protocol.OCIManifest{}, err
		}
	}
	return m, nil
}

// dockerBuild is a docker_build's build. Base images are pulled with the
// build's credential where they are in the vendor registry (the
// destination's), anonymously elsewhere.
func dockerBuild(in appconfig.BuildInput) *protocol.OCIDockerBuild {
	return &protocol.OCIDockerBuild{Dockerfile: in.Docker.Dockerfile, BuildArgs: in.Docker.BuildArgs,
		Target: in.Docker.Target, SourceDigest: in.Digest}
}

// buildOperation is the oci job operation that builds a component type.
func buildOperation(componentType string) (string, error) {
	switch componentType {
	case contract.TypeTerraformModule:
		return protocol.OCIBuildTerraformModule, nil
	case contract.TypeHelmChart:
		return protocol.OCIBuildHelmChart, nil
	case contract.TypeContainerImage:
		return protocol.OCIBuildContainerImage, nil
	case contract.TypeDockerBuild:
		return protocol.OCIBuildDockerImage, nil
	}
	return "", fmt.Errorf("component type %s has no build", componentType)
}

// RecordBuild records how a build's job ended: the artifact it pushed, or
// its error. A build whose job did not succeed names no artifact.
func (a *Builds) RecordBuild(ctx context.Context, buildID, jobID string) (contract.BuildSummary, error) {
	var art protocol.Artifact
	failed, err := a.steps.outputs(ctx, "", "", jobID, &art)
	if err != nil {
		return contract.BuildSummary{}, err
	}
	if failed == "" && (art.Digest == "" || !strings.HasPrefix(art.Digest, "sha256:")) {
		failed = fmt.Sprintf("the build job reported no artifact digest (%q)", art.Digest)
	}
	if failed != "" {
		err = a.store.FinishBuild(ctx, buildID, nil, failed)
	} else {
		err = a.store.FinishBuild(ctx, buildID, &store.BuildArtifact{Digest: art.Digest, MediaType: art.MediaType,
			ArtifactType: art.ArtifactType, Size: art.Size, Provenance: art.Provenance, Images: art.Images}, "")
	}
	if err != nil {
		return contract.BuildSummary{}, err
	}
	b, err := a.store.GetBuildByID(ctx, buildID)
	return summarize(b), err
}

// FailBuild records that a build could not run at all (its job could not be
// queued or was lost for good).
func (a *Builds) FailBuild(ctx context.Context, buildID, msg string) error {
	return a.store.FinishBuild(ctx, buildID, nil, msg)
}

// ResolveBuild finds the build a step deploys: the one of the component's
// source in the operation's config version. When there is none (or only
// failed ones) it queues one; the workflow starts a queued build.
func (a *Builds) ResolveBuild(ctx context.Context, opID, step string) (contract.ResolvedBuild, error) {
	oc, err := a.render.loadOperation(ctx, opID, step)
	if err != nil {
		return contract.ResolvedBuild{}, err
	}
	in, err := oc.cfg.BuildKey(step)
	if err != nil {
		return contract.ResolvedBuild{}, invalidConfig(err)
	}
	builds, _, err := a.store.QueueBuilds(ctx, oc.op.OrgID, oc.inst.AppID, oc.version,
		[]store.BuildSpec{{Component: step, ComponentType: in.Type, SourceDigest: in.Digest}})
	if err != nil {
		return contract.ResolvedBuild{}, err
	}
	b := builds[0]
	if err := a.store.UpdateStep(ctx, opID, step, store.StepChange{BuildID: &b.ID, Status: new(status.StepBuilding),
		StartedAt: new(time.Now().UTC())}); err != nil {
		return contract.ResolvedBuild{}, err
	}
	return contract.ResolvedBuild{BuildSummary: summarize(b), WorkflowID: b.WorkflowID}, nil
}

// AwaitBuild waits for a build to end, woken by the store's notification,
// heartbeating meanwhile.
func (a *Builds) AwaitBuild(ctx context.Context, buildID string) (contract.BuildSummary, error) {
	woke, unsub := a.store.SubscribeBuild(buildID)
	defer unsub()
	b, err := awaitEnd(ctx, woke, a.awaitCheck, func(ctx context.Context) (store.Build, bool, error) {
		b, err := a.store.GetBuildByID(ctx, buildID)
		return b, err == nil && status.BuildTerminal(b.Status), err
	}, func(b store.Build) { activity.RecordHeartbeat(ctx, b.Status) }, nil)
	if err != nil {
		return contract.BuildSummary{}, err
	}
	return summarize(b), nil
}
