package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/internal/attemptcred"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/store"
)

// buildJobTimeout bounds one build or sync job on a runner.
const buildJobTimeout = 30 * time.Minute

// Outputs of an install's sandbox that name the install's own registry.
const (
	OutputRegistryAddress   = "registry_address"
	OutputRegistryUsername  = "registry_username"
	OutputRegistryPassword  = "registry_password"
	OutputRegistryPlainHTTP = "registry_plain_http"
)

// installRepositoryPrefix is where an install's registry keeps the app's
// artifacts: "outpost/<component>".
const installRepositoryPrefix = "outpost/"

func summarize(b store.Build) contract.BuildSummary {
	return contract.BuildSummary{BuildID: b.ID, Status: b.Status, Digest: b.Digest, Error: b.Error}
}

// vendorAccess is how a job reaches the vendor's registry with a credential
// for scopes only: a placeholder the gateway fills with a credential of the
// attempt it hands out (internal/attemptcred).
func (a *Activities) vendorAccess(ctx context.Context, org, subject string, scopes ...registry.Scope) (protocol.RegistryAccess, error) {
	cfg := a.opConfig()
	if cfg.RegistryAddress == "" {
		return protocol.RegistryAccess{}, temporal.NewNonRetryableApplicationError(
			"the worker has no vendor registry configured (-registry-url)", "Config", nil)
	}
	key, err := a.Store.RegistryKey(ctx)
	if err != nil {
		return protocol.RegistryAccess{}, err
	}
	return protocol.RegistryAccess{Address: cfg.RegistryAddress, Username: subject,
		Password: attemptcred.Registry(key, org, subject, scopes...), PlainHTTP: cfg.RegistryPlainHTTP}, nil
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

// EnqueueBuildJob renders a build's job — the component's source or image,
// and a credential that may push to the org's repositories only — and
// queues it on the org's build runner. Idempotent by key.
func (a *Activities) EnqueueBuildJob(ctx context.Context, buildID, key string) (_ contract.JobRef, err error) {
	defer classified(&err)
	b, err := a.Store.GetBuildByID(ctx, buildID)
	if err != nil {
		return contract.JobRef{}, err
	}
	cfg, _, err := a.installConfig(ctx, b.OrgID, b.AppID, b.ConfigVersion)
	if err != nil {
		return contract.JobRef{}, err
	}
	in, err := cfg.BuildInput(b.Component)
	if err != nil {
		return contract.JobRef{}, invalidConfig(err)
	}
	if in.Digest != b.SourceDigest {
		return contract.JobRef{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"build %s: the source of %s in config version %d is %s, not the build's %s", b.ID, b.Component, b.ConfigVersion, in.Digest, b.SourceDigest), "SourceChanged", nil)
	}
	op, err := buildOperation(b.ComponentType)
	if err != nil {
		return contract.JobRef{}, invalidConfig(err)
	}
	dest, err := a.vendorAccess(ctx, b.OrgID, "build/"+b.ID, registry.Scope{Repository: b.OrgID + "/", Actions: []string{"pull", "push"}})
	if err != nil {
		return contract.JobRef{}, err
	}
	m := protocol.OCIManifest{Operation: op, Component: b.Component, Source: in.Source,
		Destination: protocol.OCIDestination{Registry: dest, Repository: b.Repository, Tag: b.Tag}}
	switch op {
	case protocol.OCIBuildContainerImage:
		m.Image = &protocol.OCIImageSource{Reference: in.Image, PlainHTTP: in.PlainHTTP}
	case protocol.OCIBuildDockerImage:
		// Base images are pulled with the build's credential where they are
		// in the vendor registry (the destination's), anonymously elsewhere.
		m.Docker = &protocol.OCIDockerBuild{Dockerfile: in.Docker.Dockerfile, BuildArgs: in.Docker.BuildArgs,
			Target: in.Docker.Target, SourceDigest: in.Digest}
	}
	raw, err := manifest(m)
	if err != nil {
		return contract.JobRef{}, err
	}
	r, err := a.Store.EnsureBuildRunner(ctx, b.OrgID)
	if err != nil {
		return contract.JobRef{}, err
	}
	typ := protocol.JobTypeOCI
	switch op { // in outpost-runner-helm: helm's SDK, the Docker client
	case protocol.OCIBuildHelmChart:
		typ = protocol.JobTypeHelmChart
	case protocol.OCIBuildDockerImage:
		typ = protocol.JobTypeDockerImage
	}
	j, created, err := a.Store.EnqueueJob(ctx, store.JobSpec{Key: key, OrgID: b.OrgID, RunnerID: r.ID,
		Type: typ, Manifest: raw, TimeoutMS: buildJobTimeout.Milliseconds()})
	if err != nil {
		return contract.JobRef{}, err
	}
	if err := a.Store.StartBuild(ctx, b.ID, j.ID); err != nil {
		return contract.JobRef{}, err
	}
	return contract.JobRef{JobID: j.ID, Created: created}, nil
}

// RecordBuild records how a build's job ended: the artifact it pushed, or
// its error. A build whose job did not succeed names no artifact.
func (a *Activities) RecordBuild(ctx context.Context, buildID, jobID string) (_ contract.BuildSummary, err error) {
	defer classified(&err)
	var art protocol.Artifact
	failed, err := a.jobOutputs(ctx, "", "", jobID, &art)
	if err != nil {
		return contract.BuildSummary{}, err
	}
	if failed == "" && (art.Digest == "" || !strings.HasPrefix(art.Digest, "sha256:")) {
		failed = fmt.Sprintf("the build job reported no artifact digest (%q)", art.Digest)
	}
	if failed != "" {
		err = a.Store.FinishBuild(ctx, buildID, nil, failed)
	} else {
		err = a.Store.FinishBuild(ctx, buildID, &store.BuildArtifact{Digest: art.Digest, MediaType: art.MediaType,
			ArtifactType: art.ArtifactType, Size: art.Size, Provenance: art.Provenance}, "")
	}
	if err != nil {
		return contract.BuildSummary{}, err
	}
	b, err := a.Store.GetBuildByID(ctx, buildID)
	return summarize(b), err
}

// FailBuild records that a build could not run at all (its job could not be
// queued or was lost for good).
func (a *Activities) FailBuild(ctx context.Context, buildID, msg string) error {
	return classify(a.Store.FinishBuild(ctx, buildID, nil, msg))
}

// ResolveBuild finds the build a step deploys: the one of the component's
// source in the operation's config version. When there is none (or only
// failed ones) it queues one; the workflow starts a queued build.
func (a *Activities) ResolveBuild(ctx context.Context, opID, step string) (_ contract.ResolvedBuild, err error) {
	defer classified(&err)
	oc, err := a.loadOperation(ctx, opID, step)
	if err != nil {
		return contract.ResolvedBuild{}, err
	}
	op, inst, version := oc.op, oc.inst, oc.version
	in, err := oc.cfg.BuildKey(step)
	if err != nil {
		return contract.ResolvedBuild{}, invalidConfig(err)
	}
	builds, _, err := a.Store.QueueBuilds(ctx, op.OrgID, inst.AppID, version,
		[]store.BuildSpec{{Component: step, ComponentType: in.Type, SourceDigest: in.Digest}})
	if err != nil {
		return contract.ResolvedBuild{}, err
	}
	b := builds[0]
	if err := a.Store.UpdateStep(ctx, opID, step, store.StepChange{BuildID: &b.ID, Status: new(status.StepBuilding),
		StartedAt: new(time.Now().UTC())}); err != nil {
		return contract.ResolvedBuild{}, err
	}
	return contract.ResolvedBuild{BuildSummary: summarize(b), WorkflowID: b.WorkflowID}, nil
}

// AwaitBuild waits for a build to end, woken by the store's notification,
// heartbeating meanwhile.
func (a *Activities) AwaitBuild(ctx context.Context, buildID string) (_ contract.BuildSummary, err error) {
	defer classified(&err)
	woke, unsub := a.Store.SubscribeBuild(buildID)
	defer unsub()
	tick := time.NewTicker(a.awaitCheck())
	defer tick.Stop()
	for {
		b, err := a.Store.GetBuildByID(ctx, buildID)
		if err != nil {
			return contract.BuildSummary{}, err
		}
		if status.BuildTerminal(b.Status) {
			return summarize(b), nil
		}
		activity.RecordHeartbeat(ctx, b.Status)
		select {
		case <-woke:
		case <-tick.C:
		case <-ctx.Done():
			return contract.BuildSummary{}, ctx.Err()
		}
	}
}

// installRegistry is the install's own registry, from its sandbox's outputs.
func (a *Activities) installRegistry(ctx context.Context, installID string) (protocol.RegistryAccess, error) {
	var acc protocol.RegistryAccess
	outputs, err := a.sandboxOutputs(ctx, installID)
	if err != nil {
		return acc, err
	}
	for _, o := range []struct {
		name string
		into any
	}{{OutputRegistryAddress, &acc.Address}, {OutputRegistryUsername, &acc.Username},
		{OutputRegistryPassword, &acc.Password}, {OutputRegistryPlainHTTP, &acc.PlainHTTP}} {
		if out, ok := outputs[o.name]; ok {
			if err := json.Unmarshal(out.Value, o.into); err != nil {
				return acc, temporal.NewNonRetryableApplicationError(fmt.Sprintf("the sandbox's %s output: %v", o.name, err), "BadOutput", err)
			}
		}
	}
	if acc.Address == "" {
		return acc, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"the install's sandbox has no %q output: an install deploys only from its own registry, which its sandbox provides (see docs/APP_CONFIG.md)",
			OutputRegistryAddress), "NoInstallRegistry", nil)
	}
	return acc, nil
}

// EnqueueSyncJob queues, on the install's runner, the copy of a build's
// artifact by digest from the vendor's registry (a credential that may pull
// the app's repository only) into the install's own registry.
func (a *Activities) EnqueueSyncJob(ctx context.Context, in contract.SyncJobInput) (_ contract.JobRef, err error) {
	defer classified(&err)
	op, err := a.Store.GetOperationByID(ctx, in.OperationID)
	if err != nil {
		return contract.JobRef{}, err
	}
	src, dst, err := a.syncEnds(ctx, op.InstallID, in.BuildID, true)
	if err != nil {
		return contract.JobRef{}, err
	}
	m := protocol.OCIManifest{Operation: protocol.OCISync, Artifact: &src, Destination: dst}
	spec := store.JobSpec{Key: in.Key, Type: protocol.JobTypeOCI, TimeoutMS: buildJobTimeout.Milliseconds()}
	return a.enqueueStepJob(ctx, op, in.Step, spec, m, func(jobID string) store.StepChange {
		return store.StepChange{SyncJobID: &jobID, Status: new(status.StepSyncing)}
	})
}

// syncEnds are where a sync of a build copies it from (the vendor's
// registry, with a credential that may pull the app's repository only) and
// to: the component's repository in the install's own registry, or, unless
// withRegistry, that repository without its registry (it is not known yet).
func (a *Activities) syncEnds(ctx context.Context, installID, buildID string, withRegistry bool) (protocol.ArtifactRef, protocol.OCIDestination, error) {
	b, err := a.Store.GetBuildByID(ctx, buildID)
	if err != nil {
		return protocol.ArtifactRef{}, protocol.OCIDestination{}, err
	}
	if b.Status != status.BuildSucceeded {
		return protocol.ArtifactRef{}, protocol.OCIDestination{},
			temporal.NewNonRetryableApplicationError("build "+b.ID+" has not succeeded: "+string(b.Status), "BuildNotReady", nil)
	}
	dst := protocol.OCIDestination{Repository: installRepositoryPrefix + b.Component, Tag: b.Tag}
	if withRegistry {
		if dst.Registry, err = a.installRegistry(ctx, installID); err != nil {
			return protocol.ArtifactRef{}, protocol.OCIDestination{}, err
		}
	}
	src, err := a.vendorAccess(ctx, b.OrgID, "install/"+installID, registry.Scope{Repository: b.Repository, Actions: []string{"pull"}})
	if err != nil {
		return protocol.ArtifactRef{}, protocol.OCIDestination{}, err
	}
	return protocol.ArtifactRef{Registry: src, Repository: b.Repository, Digest: b.Digest}, dst, nil
}

// RecordSync checks a sync job's result: the install's registry must hold
// exactly the build's digest. (For a container image the sync is the
// deploy: RecordImage records it once the step's dependencies are done.)
func (a *Activities) RecordSync(ctx context.Context, opID, step, buildID, jobID string) (_ contract.SyncSummary, err error) {
	defer classified(&err)
	var art protocol.Artifact
	failed, err := a.jobOutputs(ctx, opID, step, jobID, &art)
	if err != nil || failed != "" {
		return contract.SyncSummary{Failed: failed != "", Error: failed}, err
	}
	failed, err = a.checkDigest(ctx, opID, step, buildID, art.Digest)
	return contract.SyncSummary{Failed: failed != "", Error: failed}, err
}

// checkDigest checks that the install's registry holds exactly the build's
// digest after a sync; a mismatch is recorded on the step and returned.
func (a *Activities) checkDigest(ctx context.Context, opID, step, buildID, synced string) (failed string, err error) {
	b, err := a.Store.GetBuildByID(ctx, buildID)
	if err != nil {
		return "", err
	}
	if synced != b.Digest {
		msg := fmt.Sprintf("sync of build %s: the install's registry holds %s, the build is %s", b.ID, synced, b.Digest)
		return msg, a.Store.UpdateStep(ctx, opID, step, store.StepChange{Error: &msg})
	}
	return "", nil
}

// checkSynced checks a plan_apply job's sync of the step's build (when its
// manifest had one: protocol.TerraformManifest.ModuleSync).
func (a *Activities) checkSynced(ctx context.Context, opID, step string, synced *protocol.Artifact) (failed string, err error) {
	st, err := a.Store.GetStep(ctx, opID, step)
	if err != nil || st.BuildID == nil || st.SyncJobID == nil || st.PlanJobID == nil || *st.SyncJobID != *st.PlanJobID {
		return "", err // not synced by this job
	}
	if synced == nil {
		return a.checkDigest(ctx, opID, step, *st.BuildID, "nothing")
	}
	return a.checkDigest(ctx, opID, step, *st.BuildID, synced.Digest)
}

// RecordImage records that an install's container_image component runs
// the step's build — the sync was its deploy — once its dependencies are
// done.
func (a *Activities) RecordImage(ctx context.Context, opID, step string) (err error) {
	defer classified(&err)
	op, err := a.Store.GetOperationByID(ctx, opID)
	if err != nil {
		return err
	}
	st, err := a.Store.GetStep(ctx, opID, step)
	if err != nil {
		return err
	}
	if st.BuildID == nil {
		return temporal.NewNonRetryableApplicationError("step "+step+" has no build", "NoBuild", nil)
	}
	b, err := a.Store.GetBuildByID(ctx, *st.BuildID)
	if err != nil {
		return err
	}
	return a.recordImage(ctx, op, step, b)
}

// ForgetComponent forgets what an install's component ran (its outputs and
// its build) once it is torn down; for a container_image, that is the
// whole teardown (the install's registry goes with the sandbox).
func (a *Activities) ForgetComponent(ctx context.Context, opID, step string) (err error) {
	defer classified(&err)
	op, err := a.Store.GetOperationByID(ctx, opID)
	if err != nil {
		return err
	}
	if err := a.Store.DeleteOutputs(ctx, op.InstallID, step); err != nil {
		return err
	}
	return a.Store.DeleteInstallComponent(ctx, op.InstallID, step)
}

// recordImage records that an install's container_image component runs a
// build (from the operation's config version), and its outputs: the image
// in the install's registry.
func (a *Activities) recordImage(ctx context.Context, op store.InstallOperation, step string, b store.Build) error {
	installID := op.InstallID
	reg, err := a.installRegistry(ctx, installID)
	if err != nil {
		return err
	}
	repo := reg.Address + "/" + installRepositoryPrefix + b.Component
	ref := repo + "@" + b.Digest
	if err := a.saveOutputs(ctx, installID, step, appconfig.ImageOutputValues(repo, b.Digest)); err != nil {
		return err
	}
	return a.Store.SetInstallComponent(ctx, store.InstallComponent{InstallID: installID, Component: step, BuildID: b.ID,
		Digest: b.Digest, Reference: ref, ConfigVersion: op.ConfigVersion})
}

// deployedArtifact is where the install's registry holds the build a
// component step deploys (the step's build), or, for a destroy, the build
// the component last ran; nil when there is none (the module then travels
// in the manifest).
func (a *Activities) deployedArtifact(ctx context.Context, installID, step string, buildID *string) (*protocol.ArtifactRef, string, error) {
	var digest, id string
	if buildID != nil {
		b, err := a.Store.GetBuildByID(ctx, *buildID)
		if err != nil {
			return nil, "", err
		}
		digest, id = b.Digest, b.ID
	} else {
		ics, err := a.Store.ListInstallComponents(ctx, installID)
		if err != nil {
			return nil, "", err
		}
		for _, ic := range ics {
			if ic.Component == step {
				digest, id = ic.Digest, ic.BuildID
			}
		}
	}
	if digest == "" {
		return nil, "", nil
	}
	reg, err := a.installRegistry(ctx, installID)
	if err != nil {
		var app *temporal.ApplicationError
		if errors.As(err, &app) && buildID == nil {
			return nil, "", nil // destroying after the sandbox lost its registry: use the config's module
		}
		return nil, "", err
	}
	return &protocol.ArtifactRef{Registry: reg, Repository: installRepositoryPrefix + step, Digest: digest}, id, nil
}

func (a *Activities) awaitCheck() time.Duration {
	if a.AwaitCheck <= 0 {
		return 5 * time.Second
	}
	return a.AwaitCheck
}
