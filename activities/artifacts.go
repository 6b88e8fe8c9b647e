package activities

import (
	"context"

	"go.temporal.io/sdk/temporal"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/internal/attemptcred"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/store"
)

// artifactStore is what reaching builds' artifacts reads of the store.
type artifactStore interface {
	SigningKey(ctx context.Context, owner string) (store.SigningKey, error)
	GetBuildByID(ctx context.Context, buildID string) (store.Build, error)
}

// artifacts says how a job reaches the vendor's registry, and where a sync
// copies a build from and to.
type artifacts struct {
	store  artifactStore
	render *renderer
	cfg    OperationConfig
}

// vendorAccess is how a job reaches the vendor's registry with a credential
// for scopes only: a placeholder the gateway fills with a credential of the
// attempt it hands out (internal/attemptcred).
func (a *artifacts) vendorAccess(ctx context.Context, org, subject string, scopes ...registry.Scope) (protocol.RegistryAccess, error) {
	if a.cfg.RegistryAddress == "" {
		return protocol.RegistryAccess{}, temporal.NewNonRetryableApplicationError(
			"the worker has no vendor registry configured (-registry-url)", "Config", nil)
	}
	key, err := a.store.SigningKey(ctx, org)
	if err != nil {
		return protocol.RegistryAccess{}, err
	}
	return protocol.RegistryAccess{Address: a.cfg.RegistryAddress, Username: subject,
		Password: attemptcred.Registry(key, org, subject, scopes...), PlainHTTP: a.cfg.RegistryPlainHTTP}, nil
}

// syncEnds are where a sync of a build copies it from (the vendor's
// registry, with a credential that may pull the app's repository only) and
// to: the component's repository in the install's own registry, or, unless
// withRegistry, that repository without its registry (it is not known yet).
func (a *artifacts) syncEnds(ctx context.Context, installID, buildID string, withRegistry bool) (protocol.ArtifactRef, protocol.OCIDestination, error) {
	b, err := a.store.GetBuildByID(ctx, buildID)
	if err != nil {
		return protocol.ArtifactRef{}, protocol.OCIDestination{}, err
	}
	if b.Status != status.BuildSucceeded {
		return protocol.ArtifactRef{}, protocol.OCIDestination{},
			temporal.NewNonRetryableApplicationError("build "+b.ID+" has not succeeded: "+string(b.Status), "BuildNotReady", nil)
	}
	dst := protocol.OCIDestination{Repository: installRepositoryPrefix + b.Component, Tag: b.Tag}
	if withRegistry {
		if dst.Registry, err = a.render.installRegistry(ctx, installID); err != nil {
			return protocol.ArtifactRef{}, protocol.OCIDestination{}, err
		}
	}
	src, err := a.vendorAccess(ctx, b.OrgID, "install/"+installID, registry.Scope{Repository: b.Repository, Actions: []string{"pull"}})
	if err != nil {
		return protocol.ArtifactRef{}, protocol.OCIDestination{}, err
	}
	return protocol.ArtifactRef{Registry: src, Repository: b.Repository, Digest: b.Digest}, dst, nil
}
