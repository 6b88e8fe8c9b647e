package api

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// MaxConfigBytes is the largest app config body the API reads.
const MaxConfigBytes = 16 << 20

// codeInvalidConfig is the error code of a config that does not validate.
const codeInvalidConfig = "invalid_config"

// configArchiveTypes are the media types of a config sent as a gzipped tar.
var configArchiveTypes = []string{"application/gzip", "application/x-gzip", "application/x-tar+gzip", "application/tar+gzip"}

// configArchive is the body of a config sync.
const configArchive = rawBody("the config directory as a gzipped tar (application/gzip), or multipart/form-data with " +
	"one part per file, named by its path (e.g. components/db.toml)")

func newInvalidConfig(ps appconfig.Problems) *wire.InvalidConfig {
	msg := "the app config is invalid: " + ps[0].String()
	if len(ps) > 1 {
		msg = fmt.Sprintf("the app config has %d problems; the first: %s", len(ps), ps[0].String())
	}
	return &wire.InvalidConfig{Code: codeInvalidConfig, Message: msg, Errors: views(ps, problemView)}
}

func problemView(p appconfig.Problem) wire.ConfigProblem {
	return wire.ConfigProblem{File: p.File, Key: p.Key, Message: p.Message}
}

// answerInvalidConfig answers 422 with every problem of the config.
func answerInvalidConfig(c echo.Context, ps appconfig.Problems) error {
	noteErrorCode(c.Request().Context(), codeInvalidConfig)
	return c.JSON(http.StatusUnprocessableEntity, newInvalidConfig(ps))
}

// configView shows a config version. Sensitive input defaults are left
// out; variables are not shown (they are in the files).
func configView(ac store.AppConfig, cfg *appconfig.Config) wire.AppConfig {
	v := wire.AppConfig{AppID: ac.AppID, Version: ac.Version, CreatedAt: ac.CreatedAt,
		App: wire.ConfigApp{Name: cfg.App.Name, Description: cfg.App.Description}, Sandbox: wire.ConfigSandbox{Source: cfg.Sandbox.Source},
		Inputs: views(cfg.Inputs, configInputView), Components: views(cfg.Components, configComponentView),
		Actions: views(cfg.Actions, configActionView), Runbooks: views(cfg.Runbooks, configRunbookView), Files: nonNil(cfg.Files())}
	v.Levels, _ = cfg.Graph().Levels() // a stored config has no cycle
	v.Levels = nonNil(v.Levels)
	return v
}

func configInputView(in appconfig.Input) wire.ConfigInput {
	v := wire.ConfigInput{Name: in.Name, Type: in.Type, Required: in.Required, Sensitive: in.Sensitive, Description: in.Description}
	if !in.Sensitive {
		v.Default = in.Default
	}
	return v
}

func configComponentView(cmp *appconfig.Component) wire.ConfigComponent {
	v := wire.ConfigComponent{Name: cmp.Name, Type: cmp.Type, File: cmp.File,
		Dependencies: nonNil(cmp.Dependencies), DeclaredDependencies: nonNil(cmp.DeclaredDependencies)}
	v.Source, v.Image = componentSource(cmp)
	return v
}

func configActionView(a *appconfig.Action) wire.ConfigAction {
	v := wire.ConfigAction{Name: a.Name, File: a.File, Description: a.Description, TimeoutSeconds: a.TimeoutSeconds,
		Exclusive: a.Exclusive, Health: a.Health, Components: a.Components, Inputs: views(a.Inputs, configInputView), Steps: []string{}}
	v.Triggers = views(a.Triggers, func(t appconfig.Trigger) wire.ConfigActionTrigger {
		return wire.ConfigActionTrigger{Type: t.Type, Schedule: t.Schedule, Operation: t.Operation, Component: t.Component,
			When: t.When, ContinueOnFailure: t.ContinueOnFailure, Inputs: t.Inputs}
	})
	for _, st := range a.Steps {
		v.Steps = append(v.Steps, st.Name)
	}
	return v
}

// syncConfig validates a config directory and, if it is valid, stores it as
// the app's next version and makes the app's components match it.
func (s *Server) syncConfig(c echo.Context) error {
	ctx, org := c.Request().Context(), orgID(c)
	app, err := s.store.GetApp(ctx, org, c.Param("id"))
	if err != nil {
		return err
	}
	fsys, err := readConfigBody(c.Request())
	if err != nil {
		return err
	}
	cfg, err := appconfig.Load(fsys)
	var ps appconfig.Problems
	if errors.As(err, &ps) {
		return answerInvalidConfig(c, ps)
	}
	if err != nil {
		return err
	}
	if cfg.App.Name != app.Name {
		return answerInvalidConfig(c, appconfig.Problems{{File: appconfig.ConfigFile, Key: "app.name",
			Message: fmt.Sprintf("the config is for app %q, but app %s is %q", cfg.App.Name, app.ID, app.Name)}})
	}
	archive, err := cfg.Archive()
	if err != nil {
		return err
	}
	// What each component's build consumes, known before anything is
	// stored.
	specs, err := buildSpecs(cfg)
	if err != nil {
		return err
	}
	ac, created, err := s.store.SyncAppConfig(ctx, org, app.ID, store.NewAppConfig{
		Archive: archive, Description: cfg.App.Description, Components: configComponents(cfg)})
	if err != nil {
		return err
	}
	noteObject(ctx, "config_version", strconv.Itoa(ac.Version))
	stored := fmt.Sprintf("config version %d is stored", ac.Version)
	if !created {
		stored = fmt.Sprintf("the config is version %d already", ac.Version)
	}
	// Every sync (an identical one too, so that syncing again retries builds
	// that failed) makes sure each component has a build of its source.
	var builds []store.Build
	var queued []bool
	if len(specs) > 0 {
		if s.ops == nil {
			return apierr.New(http.StatusServiceUnavailable, codeUnavailable, "",
				"%s, but this server runs no workflow service: its builds were not queued", stored)
		}
		if builds, queued, err = s.store.QueueBuilds(ctx, org, app.ID, ac.Version, specs); err != nil {
			return fmt.Errorf("%s; queueing its builds: %w", stored, err)
		}
		var failed *buildStartError
		if builds, failed = s.startBuilds(ctx, builds, queued); failed != nil {
			return failed.answer(stored)
		}
	}
	// The archive is stored as normalised, so the stored time and version
	// are what a GET shows.
	v := wire.SyncedAppConfig{AppConfig: configView(ac, cfg), Builds: make([]wire.ConfigBuild, len(builds))}
	v.Created = &created
	for i, b := range builds {
		v.Builds[i] = configBuildView(b, queued[i])
	}
	status := http.StatusCreated
	if !created {
		status = http.StatusOK
	}
	return c.JSON(status, v)
}

// configComponents are the component rows a config defines. Their Config
// names where they come from, not their variables: those may hold literal
// secrets, and the workflows read them from the config version.
func configComponents(cfg *appconfig.Config) []store.ConfigComponent {
	out := make([]store.ConfigComponent, len(cfg.Components))
	for i, cmp := range cfg.Components {
		conf := store.JSONMap{"file": cmp.File, "declared_dependencies": cmp.DeclaredDependencies}
		if source, image := componentSource(cmp); source != "" {
			conf["source"] = source
		} else if image != "" {
			conf["image"] = image
		}
		out[i] = store.ConfigComponent{Name: cmp.Name, Type: cmp.Type, Dependencies: cmp.Dependencies, Config: conf}
	}
	return out
}

// componentSource is where a component comes from: the directory of a
// terraform module or helm chart, or a container image's reference.
func componentSource(cmp *appconfig.Component) (source, image string) {
	switch {
	case cmp.Terraform != nil:
		return cmp.Terraform.Source, ""
	case cmp.Helm != nil:
		return cmp.Helm.Source, ""
	case cmp.Image != nil:
		return "", cmp.Image.Image
	case cmp.Docker != nil:
		return cmp.Docker.Context, ""
	}
	return "", ""
}

// readConfigBody reads the config directory from a request: a gzipped tar,
// or multipart/form-data with one part per file, named by its path.
func readConfigBody(req *http.Request) (fs.FS, error) {
	mediaType, params, _ := mime.ParseMediaType(req.Header.Get(echo.HeaderContentType))
	if mediaType == "multipart/form-data" {
		return readConfigForm(req, params["boundary"])
	}
	if !isArchiveType(mediaType) {
		return nil, apierr.New(http.StatusUnsupportedMediaType, "unsupported_media_type", "",
			"send the config directory as a gzipped tar (Content-Type: application/gzip) or as multipart/form-data with one part per file, named by its path; not %q",
			req.Header.Get(echo.HeaderContentType))
	}
	data, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, bodyReadError(err)
	}
	fsys, err := appconfig.ReadArchive(bytes.NewReader(data))
	if err != nil {
		return nil, archiveError(err)
	}
	return fsys, nil
}

func isArchiveType(t string) bool {
	for _, a := range configArchiveTypes {
		if t == a {
			return true
		}
	}
	return false
}

func readConfigForm(req *http.Request, boundary string) (fs.FS, error) {
	if boundary == "" {
		return nil, apierr.Invalid("", "multipart/form-data without a boundary")
	}
	mr, err := req.MultipartReader()
	if err != nil {
		return nil, apierr.Invalid("", "malformed multipart body: %v", err)
	}
	var set appconfig.FileSet
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, bodyReadError(err)
		}
		name := part.FormName()
		if name == "" {
			return nil, apierr.Invalid("", "a multipart part has no name: name each part by the file's path, e.g. components/db.toml")
		}
		data, err := io.ReadAll(part)
		if err != nil {
			return nil, bodyReadError(err)
		}
		if err := set.Add(name, data, 0o644); err != nil {
			return nil, archiveError(err)
		}
	}
	fsys, err := set.FS()
	if err != nil {
		return nil, archiveError(err)
	}
	return fsys, nil
}

func bodyReadError(err error) error {
	var maxBytes *http.MaxBytesError
	if errors.As(err, &maxBytes) {
		return tooLarge(maxBytes.Limit)
	}
	return apierr.Invalid("", "reading the body failed: %v", err)
}

func archiveError(err error) error {
	var maxBytes *http.MaxBytesError
	if errors.As(err, &maxBytes) {
		return tooLarge(maxBytes.Limit)
	}
	switch {
	case errors.Is(err, appconfig.ErrTooLarge):
		return apierr.New(http.StatusRequestEntityTooLarge, protocol.CodeTooLarge, "", "%v", err)
	case errors.Is(err, appconfig.ErrArchive):
		return apierr.Invalid("", "%v", err)
	}
	return err
}

func (s *Server) listConfigs(c echo.Context) error {
	list, err := s.store.ListAppConfigs(c.Request().Context(), orgID(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.AppConfigList{Configs: views(list, func(ac store.AppConfig) wire.ConfigVersion {
		return wire.ConfigVersion{Version: ac.Version, CreatedAt: ac.CreatedAt}
	})})
}

// getConfig shows one version ("latest" for the one in force).
func (s *Server) getConfig(c echo.Context) error {
	ctx, org, appID := c.Request().Context(), orgID(c), c.Param("id")
	var ac store.AppConfig
	var err error
	if v := c.Param("version"); v == "latest" {
		ac, err = s.store.LatestAppConfig(ctx, org, appID)
	} else {
		n, perr := strconv.Atoi(v)
		if perr != nil || n < 1 {
			return apierr.Invalid("version", "%q must be a version number (1, 2, …) or latest", v)
		}
		ac, err = s.store.GetAppConfig(ctx, org, appID, n)
	}
	if err != nil {
		return err
	}
	cfg, err := loadConfig(ac)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, configView(ac, cfg))
}
