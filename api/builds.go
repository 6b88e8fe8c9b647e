package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// hasBuild says whether components of a type are built into an artifact of
// the vendor's registry (and synced into each install's registry before they
// deploy).
func hasBuild(componentType string) bool {
	switch componentType {
	case contract.TypeTerraformModule, contract.TypeHelmChart, contract.TypeContainerImage, contract.TypeDockerBuild:
		return true
	}
	return false
}

// buildSpecs are the builds a config's components need, in the config's
// order: one per component that has a build, keyed by the digest of what
// its build consumes.
func buildSpecs(cfg *appconfig.Config) ([]store.BuildSpec, error) {
	specs := []store.BuildSpec{}
	for _, cmp := range cfg.Components {
		if !hasBuild(cmp.Type) {
			continue
		}
		spec, err := buildSpec(cfg, cmp.Name)
		if err != nil {
			return nil, err
		}
		specs = append(specs, spec)
	}
	return specs, nil
}

func buildSpec(cfg *appconfig.Config, component string) (store.BuildSpec, error) {
	in, err := cfg.BuildInput(component)
	if err != nil {
		return store.BuildSpec{}, fmt.Errorf("the build input of component %s: %w", component, err)
	}
	return store.BuildSpec{Component: component, ComponentType: in.Type, SourceDigest: in.Digest}, nil
}

// configBuildView shows a build a config version uses, as a sync answers
// it: reused unless this sync created it.
func configBuildView(b store.Build, created bool) wire.ConfigBuild {
	return wire.ConfigBuild{ID: b.ID, Component: b.Component, ComponentType: b.ComponentType, SourceDigest: b.SourceDigest,
		Status: string(b.Status), Digest: b.Digest, ConfigVersion: b.ConfigVersion, WorkflowID: b.WorkflowID,
		Reused: !created, Error: b.Error}
}

// buildView shows a build; the artifact's fields are set only once it
// succeeded.
func buildView(b store.Build) wire.Build {
	return wire.Build{ID: b.ID, AppID: b.AppID, Component: b.Component, ComponentType: b.ComponentType,
		ConfigVersion: b.ConfigVersion, SourceDigest: b.SourceDigest, Status: string(b.Status), WorkflowID: b.WorkflowID,
		JobID: b.JobID, Repository: b.Repository, Tag: b.Tag, Digest: b.Digest, MediaType: b.MediaType,
		ArtifactType: b.ArtifactType, Size: b.Size, Error: b.Error, Provenance: b.Provenance, Images: buildImages(b.Images),
		CreatedAt: b.CreatedAt, FinishedAt: b.FinishedAt}
}

// buildImages are the images a chart's build copied.
func buildImages(in []protocol.ArtifactImage) []wire.BuildImage {
	var out []wire.BuildImage
	for _, i := range in {
		out = append(out, wire.BuildImage{Reference: i.Reference, Repository: i.Repository, Digest: i.Digest, Size: i.Size})
	}
	return out
}

// buildStartFailed is the error recorded on a build whose workflow could
// not be started.
func buildStartFailed(err error) string {
	if errors.Is(err, store.ErrConflict) {
		return "could not start its workflow: " + err.Error()
	}
	return "could not start its workflow: the workflow service is not available"
}

// startBuilds starts the workflow of each build created or still queued; one that does not
// start is marked failed, and so are the created builds after it (not tried). It returns the
// builds as they are then, and the first failed start's error with the components left unbuilt.
func (s *Server) startBuilds(ctx context.Context, builds []store.Build, created []bool) ([]store.Build, *buildStartError) {
	out := append([]store.Build(nil), builds...)
	var failed *buildStartError
	var msg string
	for i, b := range builds {
		// A reused build still queued may be one whose workflow never
		// started (a process died in between): starting it again is safe,
		// its workflow ID names the build.
		if !created[i] && b.Status != status.BuildQueued {
			continue
		}
		if failed == nil {
			err := s.ops.StartBuild(ctx, b)
			if err == nil {
				continue
			}
			failed = &buildStartError{err: fmt.Errorf("starting the build of %s: %w", b.Component, err)}
			msg = buildStartFailed(err)
		}
		if !created[i] {
			// Queued earlier: its workflow may be running already (it
			// was queued while the worker was away). Leave it as it is.
			failed.unstarted = append(failed.unstarted, b.Component)
			continue
		}
		failed.components = append(failed.components, b.Component)
		// Recorded even if the request was cancelled meanwhile.
		if err := s.store.FinishBuild(context.WithoutCancel(ctx), b.ID, nil, msg); err != nil {
			s.log.Error("recording a build whose workflow did not start failed", "build", b.ID, "err", err)
			continue
		}
		now := s.now()
		out[i].Status, out[i].Error, out[i].FinishedAt = status.BuildFailed, msg, &now
	}
	return out, failed
}

// buildStartError is why builds were not started.
type buildStartError struct {
	err        error
	components []string // whose builds are marked failed
	unstarted  []string // whose earlier queued builds could not be started again (left queued)
}

// answer is the answer to a sync or rebuild whose build workflows could not
// all be started: 409 for a conflict, otherwise 503. done says what was done
// anyway.
func (e *buildStartError) answer(done string) error {
	var parts []string
	if len(e.components) > 0 {
		parts = append(parts, fmt.Sprintf("the build workflow of %s could not be started (marked failed)", strings.Join(e.components, ", ")))
	}
	if len(e.unstarted) > 0 {
		parts = append(parts, fmt.Sprintf("the queued build of %s could not be started again (left queued)", strings.Join(e.unstarted, ", ")))
	}
	msg := done + ", but " + strings.Join(parts, "; ")
	if errors.Is(e.err, store.ErrConflict) {
		return fmt.Errorf("%w: %w", apierr.New(http.StatusConflict, protocol.CodeConflict, "", "%s: %v", msg, e.err), e.err)
	}
	he := apierr.New(http.StatusServiceUnavailable, codeUnavailable, "", "%s: the workflow service is not available; try again", msg)
	return fmt.Errorf("%w: %w", he, e.err)
}

// appBuild reads the build named in the path, if it is one of the path's
// app's (in the token's org).
func (s *Server) appBuild(c echo.Context) (store.Build, error) {
	return pathChild(c, s.store.GetApp, func(a store.App) string { return a.ID }, "build_id", "build",
		s.store.GetBuild, func(b store.Build) string { return b.AppID })
}

func (s *Server) getBuild(c echo.Context) error {
	b, err := s.appBuild(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, buildView(b))
}

// listBuilds lists an app's builds, newest first; with config_version, the
// builds that version uses instead (one per component, in the config's
// order), some of which earlier versions made.
func (s *Server) listBuilds(c echo.Context) error {
	ctx, org := c.Request().Context(), orgID(c)
	app, err := s.store.GetApp(ctx, org, c.Param("id"))
	if err != nil {
		return err
	}
	component := c.QueryParam("component")
	if len(component) > 200 {
		return apierr.Invalid("component", "is longer than 200 characters")
	}
	v := c.QueryParam("config_version")
	if v == "" {
		builds, err := s.store.ListBuilds(ctx, org, app.ID, store.BuildFilter{Component: component})
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, wire.BuildList{Builds: views(builds, buildView)})
	}
	ac, err := s.configVersion(c, app.ID, "config_version", v)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(ac)
	if err != nil {
		return err
	}
	specs, err := buildSpecs(cfg)
	if err != nil {
		return fmt.Errorf("app %s config version %d: %w", app.ID, ac.Version, err)
	}
	builds := []store.Build{}
	for _, sp := range specs {
		if component != "" && sp.Component != component {
			continue
		}
		b, err := s.store.FindBuild(ctx, app.ID, sp.Component, sp.SourceDigest)
		switch {
		case err == nil:
		case errors.Is(err, store.ErrNotFound) && b.ID != "":
			// Only failed builds: the latest one says why there is none.
		case errors.Is(err, store.ErrNotFound):
			continue // never built (a version older than builds)
		default:
			return err
		}
		builds = append(builds, b)
	}
	return c.JSON(http.StatusOK, wire.BuildList{Builds: views(builds, buildView)})
}

// configVersion reads the app config version named by value (a number, or
// latest) of a parameter.
func (s *Server) configVersion(c echo.Context, appID, param, value string) (store.AppConfig, error) {
	ctx, org := c.Request().Context(), orgID(c)
	if value == "latest" {
		ac, err := s.store.LatestAppConfig(ctx, org, appID)
		if errors.Is(err, store.ErrNotFound) {
			return ac, apierr.Invalid(param, "the app has no config yet")
		}
		return ac, err
	}
	n, err := strconv.Atoi(value)
	if err != nil || n < 1 {
		return store.AppConfig{}, apierr.Invalid(param, "%q must be a version number (1, 2, …) or latest", value)
	}
	ac, err := s.store.GetAppConfig(ctx, org, appID, n)
	if errors.Is(err, store.ErrNotFound) {
		return ac, apierr.Invalid(param, "the app has no config version %d", n)
	}
	return ac, err
}

// loadConfig loads a stored config version.
func loadConfig(ac store.AppConfig) (*appconfig.Config, error) {
	archive, err := ac.Archive()
	if err != nil {
		return nil, err
	}
	cfg, err := appconfig.FromArchive(archive)
	if err != nil {
		return nil, fmt.Errorf("app %s config version %d no longer loads: %w", ac.AppID, ac.Version, err)
	}
	return cfg, nil
}

// rebuild makes sure a component of the latest config version has a build of
// its current source: one that succeeded or is under way is answered as it
// is (200); otherwise (only failed builds) a build is queued and its
// workflow started (202).
func (s *Server) rebuild(c echo.Context) error {
	ctx, org := c.Request().Context(), orgID(c)
	app, req, err := pathRequest[wire.RebuildRequest](c, s.store.GetApp)
	if err != nil {
		return err
	}
	if req.Component == "" {
		return apierr.Invalid("component", "is required")
	}
	if s.ops == nil {
		return errNoOps()
	}
	ac, err := s.store.LatestAppConfig(ctx, org, app.ID)
	if errors.Is(err, store.ErrNotFound) {
		return apierr.New(http.StatusConflict, protocol.CodeConflict, "", "the app has no config yet: sync one with POST /v1/apps/%s/configs", app.ID)
	}
	if err != nil {
		return err
	}
	cfg, err := loadConfig(ac)
	if err != nil {
		return err
	}
	cmp, ok := cfg.Component(req.Component)
	if !ok {
		return apierr.New(http.StatusUnprocessableEntity, protocol.CodeInvalid, "component",
			"the app's latest config (version %d) has no component %q (it has: %s)", ac.Version, req.Component, strings.Join(cfg.ComponentNames(), ", "))
	}
	if !hasBuild(cmp.Type) {
		return apierr.New(http.StatusUnprocessableEntity, protocol.CodeInvalid, "component",
			"component %q is a %s: it has no build", cmp.Name, cmp.Type)
	}
	spec, err := buildSpec(cfg, cmp.Name)
	if err != nil {
		return err
	}
	builds, created, err := s.store.QueueBuilds(ctx, org, app.ID, ac.Version, []store.BuildSpec{spec})
	if err != nil {
		return err
	}
	noteObject(ctx, "build_id", builds[0].ID)
	builds, failed := s.startBuilds(ctx, builds, created) // a reused build still queued is started again
	if failed != nil {
		return failed.answer(fmt.Sprintf("build %s was queued", builds[0].ID))
	}
	if !created[0] {
		return c.JSON(http.StatusOK, buildView(builds[0]))
	}
	return c.JSON(http.StatusAccepted, buildView(builds[0]))
}

// listInstallComponents shows which build each of the install's components
// runs, and where the install's registry holds it.
func (s *Server) listInstallComponents(c echo.Context) error {
	return answerByID(c, s.store.GetInstall, func(ctx context.Context, inst store.Install) (wire.InstallComponentList, error) {
		list, err := s.store.ListInstallComponents(ctx, inst.ID)
		return wire.InstallComponentList{Components: views(list, func(ic store.InstallComponent) wire.InstallComponent {
			return wire.InstallComponent{Component: ic.Component, BuildID: ic.BuildID, Digest: ic.Digest, Reference: ic.Reference,
				ConfigVersion: ic.ConfigVersion, UpdatedAt: ic.UpdatedAt}
		})}, err
	})
}
