package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// installedStore is what recording an install's components reads and
// writes of the store.
type installedStore interface {
	GetOperationByID(ctx context.Context, opID string) (store.InstallOperation, error)
	GetBuildByID(ctx context.Context, buildID string) (store.Build, error)
	ListInstallComponents(ctx context.Context, installID string) ([]store.InstallComponent, error)
	SetInstallComponent(ctx context.Context, ic store.InstallComponent) error
	DeleteInstallComponent(ctx context.Context, installID, component string) error
	SaveOutputs(ctx context.Context, installID, name, outputs string) error
	DeleteOutputs(ctx context.Context, installID, name string) error
	UpdateStep(ctx context.Context, opID, name string, change store.StepChange) error
}

// installed records what an install's components run once a step changed
// them: the build, its outputs, a plan; or forgets them.
type installed struct {
	store  installedStore
	steps  *stepJobs
	render *renderer
}

// recordPlan stores a plan on its step. A plan without changes for a
// component's new build means the install now runs that build (nothing
// else is left to apply), so it is recorded as the component's build —
// except in a plan-only operation, which changes nothing.
func (in *installed) recordPlan(ctx context.Context, opID, step string, out protocol.TerraformPlanOutputs) (contract.PlanSummary, error) {
	s := contract.PlanSummary{HasChanges: out.HasChanges, Add: out.Add, Change: out.Change, Destroy: out.Destroy}
	err := in.store.UpdateStep(ctx, opID, step, store.StepChange{HasChanges: &out.HasChanges, Add: &out.Add,
		Change: &out.Change, Remove: &out.Destroy, PlanText: &out.PlanText, Policies: &out.Policies})
	if err != nil || out.HasChanges || step == status.SandboxStep {
		return s, err
	}
	op, st, err := in.steps.stepOf(ctx, opID, step)
	if err != nil || op.PlanOnly || st.Destroy {
		return s, err
	}
	return s, in.recordDeployedBuild(ctx, opID, op.InstallID, step)
}

// recordDeployedBuild records the build a component step deployed, and
// the config version it came from, as what the install's component runs.
func (in *installed) recordDeployedBuild(ctx context.Context, opID, installID, step string) error {
	op, st, err := in.steps.stepOf(ctx, opID, step)
	if err != nil || st.BuildID == nil {
		return err
	}
	ref, _, err := in.deployedArtifact(ctx, installID, step, st.BuildID)
	if err != nil || ref == nil {
		return err
	}
	return in.store.SetInstallComponent(ctx, store.InstallComponent{InstallID: installID, Component: step, BuildID: *st.BuildID,
		Digest: ref.Digest, Reference: ref.Registry.Address + "/" + ref.Repository + "@" + ref.Digest, ConfigVersion: op.ConfigVersion})
}

// deployedArtifact is where the install's registry holds the build a
// component step deploys (the step's build), or, for a destroy, the build
// the component last ran; nil when there is none (the module then travels
// in the manifest).
func (in *installed) deployedArtifact(ctx context.Context, installID, step string, buildID *string) (*protocol.ArtifactRef, string, error) {
	var digest, id string
	if buildID != nil {
		b, err := in.store.GetBuildByID(ctx, *buildID)
		if err != nil {
			return nil, "", err
		}
		digest, id = b.Digest, b.ID
	} else {
		ics, err := in.store.ListInstallComponents(ctx, installID)
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
	reg, err := in.render.installRegistry(ctx, installID)
	if err != nil {
		var app *temporal.ApplicationError
		if errors.As(err, &app) && buildID == nil {
			return nil, "", nil // destroying after the sandbox lost its registry: use the config's module
		}
		return nil, "", err
	}
	return &protocol.ArtifactRef{Registry: reg, Repository: installRepositoryPrefix + step, Digest: digest}, id, nil
}

// recordImage records that an install's container_image component runs a
// build (from the operation's config version), and its outputs: the image
// in the install's registry.
func (in *installed) recordImage(ctx context.Context, op store.InstallOperation, step string, b store.Build) error {
	reg, err := in.render.installRegistry(ctx, op.InstallID)
	if err != nil {
		return err
	}
	repo := reg.Address + "/" + installRepositoryPrefix + b.Component
	if err := in.saveOutputs(ctx, op.InstallID, step, appconfig.ImageOutputValues(repo, b.Digest)); err != nil {
		return err
	}
	return in.store.SetInstallComponent(ctx, store.InstallComponent{InstallID: op.InstallID, Component: step, BuildID: b.ID,
		Digest: b.Digest, Reference: repo + "@" + b.Digest, ConfigVersion: op.ConfigVersion})
}

// saveOutputs records a component's outputs (the shape terraform's have).
func (in *installed) saveOutputs(ctx context.Context, installID, step string, values map[string]appconfig.Value) error {
	raw, err := json.Marshal(struct {
		Outputs map[string]appconfig.Value `json:"outputs"`
	}{values})
	if err != nil {
		return err
	}
	return in.store.SaveOutputs(ctx, installID, step, string(raw))
}

// forget forgets what an install's component ran (its outputs and its
// build) once it is torn down.
func (in *installed) forget(ctx context.Context, opID, step string) error {
	op, err := in.store.GetOperationByID(ctx, opID)
	if err != nil {
		return err
	}
	if err := in.store.DeleteOutputs(ctx, op.InstallID, step); err != nil {
		return err
	}
	return in.store.DeleteInstallComponent(ctx, op.InstallID, step)
}

// checkDigest checks that the install's registry holds exactly the build's
// digest after a sync; a mismatch is recorded on the step and returned.
func (in *installed) checkDigest(ctx context.Context, opID, step, buildID, synced string) (failed string, err error) {
	b, err := in.store.GetBuildByID(ctx, buildID)
	if err != nil {
		return "", err
	}
	if synced != b.Digest {
		msg := fmt.Sprintf("sync of build %s: the install's registry holds %s, the build is %s", b.ID, synced, b.Digest)
		return msg, in.store.UpdateStep(ctx, opID, step, store.StepChange{Error: &msg})
	}
	return "", nil
}
