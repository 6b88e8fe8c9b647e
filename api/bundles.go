package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/releasebundle"
	"github.com/outpost-dev/outpost/runner/ociclient"
	"github.com/outpost-dev/outpost/store"
)

// releaseBundleArchive is the answer of a bundle export.
const releaseBundleArchive = rawBody("the release bundle: an OCI image layout as a tar, signed by the org's release key (docs/bundles.md)")

// bundleCredentialTTL is how long the export's pull credential lasts.
const bundleCredentialTTL = 30 * time.Minute

// exportBundle lays a config version's release bundle out in a scratch
// directory (every artifact's manifests copied by digest from the vendor
// registry and its other blobs found there, the config version, the
// index, the signature), then streams it as a tar of known length, the
// blobs read from the registry. Laid out first, so that a missing build,
// blob or registry error is an answer, not a cut stream.
func (s *Server) exportBundle(c echo.Context) error {
	ctx, org := c.Request().Context(), orgID(c)
	app, err := s.store.GetApp(ctx, org, c.Param("id"))
	if err != nil {
		return err
	}
	ac, err := s.configVersion(c, app.ID, "version", c.Param("version"))
	if err != nil {
		return err
	}
	if s.registry.Address == "" {
		return apierr.New(http.StatusServiceUnavailable, codeUnavailable, "", "this API process reaches no vendor registry")
	}
	contents, err := s.bundleContents(ctx, app, ac)
	if err != nil {
		return err
	}
	// An admin makes the key (POST /v1/settings/release-key): an export,
	// an operator's right, only uses it.
	if _, err := s.store.ReleasePublicKey(ctx, org); errors.Is(err, store.ErrNotFound) {
		return apierr.New(http.StatusConflict, protocol.CodeConflict, "",
			"the org has no release key yet: an admin makes it (POST /v1/settings/release-key, outpostctl bundle release-key --create)")
	}
	key, _, err := s.store.ReleaseKey(ctx, org)
	if err != nil {
		return err
	}
	_, priv, err := key.Keys()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp(s.bundleDir, "outpost-bundle-*")
	if err != nil {
		return fmt.Errorf("release bundle: %w", err)
	}
	defer os.RemoveAll(dir)
	layout, err := releasebundle.Write(ctx, filepath.Join(dir, "layout"), contents, priv)
	if err != nil {
		return fmt.Errorf("release bundle of app %s config version %d: %w", app.ID, ac.Version, err)
	}
	size, err := layout.Size()
	if err != nil {
		return fmt.Errorf("release bundle of app %s config version %d: %w", app.ID, ac.Version, err)
	}
	w := c.Response()
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(time.Hour))
	w.Header().Set(echo.HeaderContentType, "application/x-tar")
	w.Header().Set(echo.HeaderContentLength, strconv.FormatInt(size, 10))
	w.Header().Set(echo.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="%s-%d.tar"`, app.Name, ac.Version))
	w.Header().Set("Outpost-Bundle-Index", layout.Index.Digest.String())
	w.Header().Set("Outpost-Release-Key", key.KeyID)
	w.WriteHeader(http.StatusOK)
	// net/http's own writer: it hands a blob's file to the kernel
	// (sendfile) once the length is known.
	if err := layout.Tar(ctx, w.Writer); err != nil {
		// Fewer bytes than Content-Length: the client sees the answer cut.
		s.log.Warn("streaming a release bundle failed", "app", app.ID, "config_version", ac.Version, "err", err)
		panic(http.ErrAbortHandler) // cut the connection: a client must not take a cut tar for a whole one
	}
	return nil
}

// bundleContents are the config version and the artifact of each of its
// components that has a build: every one must have succeeded (409 naming
// the first that has not).
func (s *Server) bundleContents(ctx context.Context, app store.App, ac store.AppConfig) (releasebundle.Contents, error) {
	cfg, err := loadConfig(ac)
	if err != nil {
		return releasebundle.Contents{}, err
	}
	archive, err := ac.Archive()
	if err != nil {
		return releasebundle.Contents{}, err
	}
	specs, err := buildSpecs(cfg)
	if err != nil {
		return releasebundle.Contents{}, fmt.Errorf("app %s config version %d: %w", app.ID, ac.Version, err)
	}
	c := releasebundle.Contents{Org: app.OrgID, App: app.ID, AppName: app.Name, ConfigVersion: ac.Version, ConfigArchive: archive}
	for _, sp := range specs {
		b, err := s.store.FindBuild(ctx, app.ID, sp.Component, sp.SourceDigest)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return c, err
		}
		if err != nil || b.Status != status.BuildSucceeded {
			return c, apierr.New(http.StatusConflict, protocol.CodeConflict, "",
				"component %s has no succeeded build of config version %d (%s): a bundle holds every artifact", sp.Component, ac.Version, buildState(b))
		}
		repo, err := s.pullRepository(ctx, app.OrgID, b.Repository)
		if err != nil {
			return c, err
		}
		c.Artifacts = append(c.Artifacts, releasebundle.Artifact{Component: b.Component, ComponentType: b.ComponentType,
			BuildID: b.ID, Digest: b.Digest, Source: repo, Files: s.vendorBlobs})
		images, err := s.buildImages(ctx, b)
		if err != nil {
			return c, err
		}
		c.Artifacts = append(c.Artifacts, images...)
	}
	return c, nil
}

// buildImages are the images a chart's build copied beside it, each from
// its repository in the vendor registry.
func (s *Server) buildImages(ctx context.Context, b store.Build) ([]releasebundle.Artifact, error) {
	var out []releasebundle.Artifact
	for _, img := range b.Images {
		repo, err := s.pullRepository(ctx, b.OrgID, img.Repository)
		if err != nil {
			return nil, err
		}
		out = append(out, releasebundle.Artifact{Component: b.Component, ComponentType: b.ComponentType, BuildID: b.ID,
			Image: img.Reference, Digest: img.Digest, Source: repo, Files: s.vendorBlobs})
	}
	return out, nil
}

func buildState(b store.Build) string {
	if b.ID == "" {
		return "never built"
	}
	return "build " + b.ID + " " + string(b.Status)
}

// pullRepository reaches a repository of the org's in the vendor registry
// with a short-lived credential that may pull it only.
func (s *Server) pullRepository(ctx context.Context, org, repository string) (*remote.Repository, error) {
	key, err := s.store.SigningKey(ctx, org)
	if err != nil {
		return nil, err
	}
	access := s.registry
	access.Username, access.Password = registry.IssueCredential(registry.Key(key), "bundle-export",
		[]registry.Scope{{Repository: repository, Actions: []string{"pull"}}}, bundleCredentialTTL, s.now())
	return ociclient.Repository(access, repository)
}
