package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// Bounds of a runner update's health deadline and drain timeout, in seconds.
const (
	defaultHealthDeadline = 120
	minHealthDeadline     = 5
	maxHealthDeadline     = 3600
	defaultDrainTimeout   = int(protocol.DefaultDrainTimeout / time.Second)
	minDrainTimeout       = 5
	maxDrainTimeout       = 86400
)

// runnerUpdateStarter is what the API needs of Operations to update a
// runner (worker.Operations has it).
type runnerUpdateStarter interface {
	StartRunnerUpdate(ctx context.Context, u store.RunnerUpdate, deadline, drain time.Duration) error
}

func (s *Server) listRunnerVersions(c echo.Context) error {
	vs, err := s.store.ListRunnerVersions(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.RunnerVersionList{Versions: views(vs, func(v store.RunnerVersion) wire.RunnerVersion {
		return wire.RunnerVersion{Version: v.Version, Repository: v.Repository, Digest: v.Digest, BinaryDigest: v.BinaryDigest,
			Size: v.Size, CreatedAt: v.CreatedAt}
	})})
}

// checkPublished answers 422 naming field when version is not published.
func (s *Server) checkPublished(ctx context.Context, field, version string) error {
	if version == "" {
		return nil
	}
	_, err := s.store.GetRunnerVersion(ctx, version)
	if errors.Is(err, store.ErrNotFound) {
		return apierr.New(http.StatusUnprocessableEntity, protocol.CodeInvalid, field,
			"runner version %q is not published (outpost runner publish)", version)
	}
	return err
}

// policyView shows an install's (or, without install_id, the org's)
// runner version policy, and the version its runner should run.
func policyView(org, inst store.RunnerPolicy) wire.RunnerPolicy {
	v := wire.RunnerPolicy{InstallID: inst.InstallID, OrgVersion: org.Version, Version: inst.Version, Pinned: inst.Pinned}
	if !inst.Pinned {
		v.Target = inst.Version
		if v.Target == "" {
			v.Target = org.Version
		}
	}
	return v
}

func (s *Server) putOrgRunnerPolicy(c echo.Context) error {
	ctx := c.Request().Context()
	var req wire.RunnerPolicyRequest
	if err := apierr.Bind(c, &req); err != nil {
		return err
	}
	switch {
	case req.Version == nil:
		return apierr.Invalid("version", "is required: the runner version the org's installs should run (\"\" for none)")
	case req.Pinned != nil:
		return apierr.Invalid("pinned", "is an install's setting: PUT /v1/installs/{id}/runner-policy")
	}
	if err := s.checkPublished(ctx, "version", *req.Version); err != nil {
		return err
	}
	p, err := s.store.SetRunnerPolicy(ctx, store.RunnerPolicy{OrgID: orgID(c), Version: *req.Version})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, policyView(p, store.RunnerPolicy{}))
}

func (s *Server) getInstallRunnerPolicy(c echo.Context) error {
	return answerByID(c, s.store.GetInstall, func(ctx context.Context, inst store.Install) (wire.RunnerPolicy, error) {
		org, ip, err := s.store.RunnerPolicies(ctx, inst.OrgID, inst.ID)
		return policyView(org, ip), err
	})
}

func (s *Server) putInstallRunnerPolicy(c echo.Context) error {
	ctx := c.Request().Context()
	inst, req, err := pathRequest[wire.RunnerPolicyRequest](c, s.store.GetInstall)
	if err != nil {
		return err
	}
	org, ip, err := s.store.RunnerPolicies(ctx, inst.OrgID, inst.ID)
	if err != nil {
		return err
	}
	if req.Version != nil {
		if err := s.checkPublished(ctx, "version", *req.Version); err != nil {
			return err
		}
		ip.Version = *req.Version
	}
	if req.Pinned != nil {
		ip.Pinned = *req.Pinned
	}
	if ip, err = s.store.SetRunnerPolicy(ctx, ip); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, policyView(org, ip))
}

// seconds is an optional field in seconds, checked against its bounds.
func seconds(field string, v *int, def, lo, hi int) (time.Duration, error) {
	if v == nil {
		return time.Duration(def) * time.Second, nil
	}
	if *v < lo || *v > hi {
		return 0, apierr.Invalid(field, "%d is out of range: %d to %d seconds", *v, lo, hi)
	}
	return time.Duration(*v) * time.Second, nil
}

func (s *Server) createRunnerUpdate(c echo.Context) error {
	ctx := c.Request().Context()
	inst, req, err := pathRequest[wire.CreateRunnerUpdateRequest](c, s.store.GetInstall)
	if err != nil {
		return err
	}
	deadline, err := seconds("health_deadline_seconds", req.HealthDeadlineSeconds, defaultHealthDeadline, minHealthDeadline, maxHealthDeadline)
	if err != nil {
		return err
	}
	drain, err := seconds("drain_timeout_seconds", req.DrainTimeoutSeconds, defaultDrainTimeout, minDrainTimeout, maxDrainTimeout)
	if err != nil {
		return err
	}
	u, err := s.newRunnerUpdate(ctx, inst, req.Version)
	if err != nil {
		return err
	}
	ops, ok := s.ops.(runnerUpdateStarter)
	if !ok {
		return errNoOps()
	}
	if u, err = s.store.CreateRunnerUpdate(ctx, u); err != nil {
		return err
	}
	noteObject(ctx, "runner_update_id", u.ID)
	err = s.startRecorded(ctx, "runner update", u.ID, func(ctx context.Context) error { return ops.StartRunnerUpdate(ctx, u, deadline, drain) },
		func(ctx context.Context, err error) error {
			reason := "the update's workflow could not be started"
			if errors.Is(err, store.ErrConflict) {
				reason = "another update of this install's runner was under way"
			}
			return s.store.FinishRunnerUpdate(ctx, u.ID, status.RunnerUpdateFailed, reason)
		})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, runnerUpdateView(u))
}

// newRunnerUpdate checks that the install's runner may be updated, to
// version or its policy's target, and returns the update to record.
func (s *Server) newRunnerUpdate(ctx context.Context, inst store.Install, version string) (store.RunnerUpdate, error) {
	org, ip, err := s.store.RunnerPolicies(ctx, inst.OrgID, inst.ID)
	if err != nil {
		return store.RunnerUpdate{}, err
	}
	if ip.Pinned {
		return store.RunnerUpdate{}, apierr.New(http.StatusConflict, protocol.CodeConflict, "",
			"install %s's runner is pinned: unpin it (PUT /v1/installs/%s/runner-policy {\"pinned\": false}) to update it", inst.ID, inst.ID)
	}
	if version == "" {
		version = policyView(org, ip).Target
	}
	if version == "" {
		return store.RunnerUpdate{}, apierr.Invalid("version", "is required: neither the install nor its org wants a runner version")
	}
	v, err := s.store.GetRunnerVersion(ctx, version)
	if err != nil {
		return store.RunnerUpdate{}, s.checkPublished(ctx, "version", version)
	}
	r, err := s.store.GetInstallRunner(ctx, inst.OrgID, inst.ID)
	if err != nil {
		return store.RunnerUpdate{}, err
	}
	return store.RunnerUpdate{ID: store.NewID("rup"), OrgID: inst.OrgID, InstallID: inst.ID, RunnerID: r.ID,
		FromVersion: r.Version, Version: v.Version, Digest: v.Digest, WorkflowID: contract.RunnerUpdateWorkflowID(inst.ID)}, nil
}

func (s *Server) getRunnerUpdate(c echo.Context) error {
	u, err := installChild(s, c, "uid", "runner update", s.store.GetRunnerUpdate,
		func(u store.RunnerUpdate) string { return u.InstallID })
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, runnerUpdateView(u))
}

// runnerUpdateView shows a runner update; what the runner reported shows
// as its reason once the update ended.
func runnerUpdateView(u store.RunnerUpdate) wire.RunnerUpdate {
	return wire.RunnerUpdate{ID: u.ID, OrgID: u.OrgID, InstallID: u.InstallID, RunnerID: u.RunnerID, FromVersion: u.FromVersion,
		Version: u.Version, Digest: u.Digest, WorkflowID: u.WorkflowID, Status: string(u.Status), Reason: u.Reason,
		CreatedAt: u.CreatedAt, FinishedAt: u.FinishedAt}
}
