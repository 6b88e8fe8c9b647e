package activities

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// forgetStore is what leaving a step behind reads and writes of the store.
type forgetStore interface {
	GetStep(ctx context.Context, opID, name string) (store.InstallStep, error)
	UpdateStep(ctx context.Context, opID, name string, change store.StepChange) error
	TerraformStateResources(ctx context.Context, orgID, workspace string) ([]string, error)
	DiscardTerraformState(ctx context.Context, orgID, workspace string) error
	DeleteAppliedRender(ctx context.Context, installID, name string) error
}

// Forget is what a deprovision with forget runs on a step it could not
// destroy (the install's account changed under it, a stand-in is gone).
type Forget struct {
	store     forgetStore
	render    *renderer
	installed *installed
	helm      *Helm
}

// LeaveBehind records what a step of a deprovision with forget could not
// destroy (why: errMsg) and forgets it: the step ends left_behind with, on
// it, the resources still in its terraform state (or its helm release and
// the objects its last deploy recorded); the install forgets the step's
// outputs, build and applied render, and its state is retired (every
// version kept for the record), as after a destroy. It returns what was
// left behind.
func (a *Forget) LeaveBehind(ctx context.Context, opID, step, errMsg string) ([]string, error) {
	oc, err := a.render.loadOperation(ctx, opID, step)
	if err != nil {
		return nil, err
	}
	if !oc.op.Forget || oc.op.Kind != contract.OpDeprovision {
		return nil, temporal.NewNonRetryableApplicationError("operation "+opID+" is not a deprovision with forget", "InvalidInput", nil)
	}
	st, err := a.store.GetStep(ctx, opID, step)
	if err != nil {
		return nil, err
	}
	left := st.LeftBehind
	if st.Status != status.StepLeftBehind { // not recorded by an earlier attempt
		if left, err = a.leftBehind(ctx, oc, step); err != nil {
			return nil, err
		}
		now, leftStatus := time.Now().UTC(), status.StepLeftBehind
		if err := a.store.UpdateStep(ctx, opID, step, store.StepChange{Status: &leftStatus, Error: &errMsg,
			LeftBehind: &left, FinishedAt: &now}); err != nil {
			return nil, err
		}
	}
	if err := a.installed.forget(ctx, opID, step); err != nil {
		return nil, err
	}
	if err := a.store.DeleteAppliedRender(ctx, oc.op.InstallID, step); err != nil {
		return nil, err
	}
	return left, a.store.DiscardTerraformState(ctx, oc.op.OrgID, Workspace(oc.op.InstallID, step))
}

// leftBehind is what is left of a step: a helm_chart component's release
// and its objects, else the resources in the step's terraform state.
func (a *Forget) leftBehind(ctx context.Context, oc operationContext, step string) ([]string, error) {
	if c, ok := oc.cfg.Component(step); ok && c.Helm != nil {
		objects, err := a.helm.releaseObjects(ctx, oc.op.InstallID, step)
		release := fmt.Sprintf("helm release %q in namespace %q", c.Helm.ReleaseName, c.Helm.Namespace)
		return append([]string{release}, objects...), err
	}
	left, err := a.store.TerraformStateResources(ctx, oc.op.OrgID, Workspace(oc.op.InstallID, step))
	if left == nil {
		left = []string{} // recorded as nothing left, not as unknown
	}
	return left, err
}
