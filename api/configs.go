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
	"time"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
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

// invalidConfig is the 422 answer: every problem, each with its file and
// key.
type invalidConfig struct {
	Code    string              `json:"code"`
	Message string              `json:"message"`
	Errors  []appconfig.Problem `json:"errors"`
}

func newInvalidConfig(ps appconfig.Problems) *invalidConfig {
	msg := "the app config is invalid: " + ps[0].String()
	if len(ps) > 1 {
		msg = fmt.Sprintf("the app config has %d problems; the first: %s", len(ps), ps[0].String())
	}
	return &invalidConfig{Code: codeInvalidConfig, Message: msg, Errors: ps}
}

// answerInvalidConfig answers 422 with every problem of the config.
func answerInvalidConfig(c echo.Context, ps appconfig.Problems) error {
	noteErrorCode(c.Request().Context(), codeInvalidConfig)
	return c.JSON(http.StatusUnprocessableEntity, newInvalidConfig(ps))
}

// configView is a config version as the API shows it. Sensitive input
// defaults are left out; variables are not shown (they are in the files).
type configView struct {
	AppID      string                `json:"app_id"`
	Version    int                   `json:"version"`
	CreatedAt  time.Time             `json:"created_at"`
	Created    *bool                 `json:"created,omitempty"`
	App        appconfig.App         `json:"app"`
	Sandbox    sandboxView           `json:"sandbox"`
	Inputs     []configInputView     `json:"inputs"`
	Components []configComponentView `json:"components"`
	// Levels group the components for deployment: each level depends only
	// on earlier ones.
	Levels [][]string `json:"levels"`
	Files  []string   `json:"files"`
}

type sandboxView struct {
	Source string `json:"source"`
}

type configInputView struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Required    bool   `json:"required"`
	Sensitive   bool   `json:"sensitive"`
	Default     any    `json:"default,omitempty"` // left out when sensitive
	Description string `json:"description,omitempty"`
}

type configComponentView struct {
	Name                 string   `json:"name"`
	Type                 string   `json:"type"`
	Source               string   `json:"source,omitempty"`
	Image                string   `json:"image,omitempty"`
	File                 string   `json:"file"`
	Dependencies         []string `json:"dependencies"`
	DeclaredDependencies []string `json:"declared_dependencies"`
}

func newConfigView(ac store.AppConfig, cfg *appconfig.Config) configView {
	v := configView{AppID: ac.AppID, Version: ac.Version, CreatedAt: ac.CreatedAt, App: cfg.App,
		Sandbox: sandboxView{Source: cfg.Sandbox.Source}, Inputs: []configInputView{},
		Components: []configComponentView{}, Files: cfg.Files()}
	for _, in := range cfg.Inputs {
		iv := configInputView{Name: in.Name, Type: in.Type, Required: in.Required, Sensitive: in.Sensitive, Description: in.Description}
		if !in.Sensitive {
			iv.Default = in.Default
		}
		v.Inputs = append(v.Inputs, iv)
	}
	for _, cmp := range cfg.Components {
		cv := configComponentView{Name: cmp.Name, Type: cmp.Type, File: cmp.File,
			Dependencies: cmp.Dependencies, DeclaredDependencies: cmp.DeclaredDependencies}
		cv.Source, cv.Image = componentSource(cmp)
		v.Components = append(v.Components, cv)
	}
	v.Levels, _ = cfg.Graph().Levels() // a stored config has no cycle
	if v.Levels == nil {
		v.Levels = [][]string{}
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
	v := syncView{configView: newConfigView(ac, cfg), Builds: make([]syncBuild, len(builds))}
	v.Created = &created
	for i, b := range builds {
		v.Builds[i] = newSyncBuild(b, queued[i])
	}
	status := http.StatusCreated
	if !created {
		status = http.StatusOK
	}
	return c.JSON(status, v)
}

// syncView is a sync's answer: the config version and the builds it uses.
type syncView struct {
	configView
	Builds []syncBuild `json:"builds"`
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
	type item struct {
		Version   int       `json:"version"`
		CreatedAt time.Time `json:"created_at"`
	}
	out := make([]item, len(list))
	for i, ac := range list {
		out[i] = item{Version: ac.Version, CreatedAt: ac.CreatedAt}
	}
	return c.JSON(http.StatusOK, map[string]any{"configs": out})
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
	return c.JSON(http.StatusOK, newConfigView(ac, cfg))
}

// configSchemas are the OpenAPI schemas of the config routes.
func configSchemas() map[string]any {
	problem := object(props{"file": described(str, "the file, relative to the config's root"),
		"key": described(str, "the dotted key in the file, e.g. inputs[1].type"), "message": str}, "file", "key", "message")
	return map[string]any{
		"ConfigArchive": described(map[string]any{"type": "string", "format": "binary"},
			"the config directory as a gzipped tar (application/gzip), or multipart/form-data with one part per file, named by its path (e.g. components/db.toml)"),
		"ConfigProblem": problem,
		"InvalidConfig": object(props{"code": described(str, "invalid_config"), "message": str,
			"errors": arrayOf(ref("ConfigProblem"))}, "code", "message", "errors"),
		"AppConfig": object(props{
			"app_id": str, "version": integer, "created_at": dateTime,
			"created": described(boolean, "only in a sync's answer: false when the config was the latest version already"),
			"app":     object(props{"name": str, "description": str}, "name", "description"),
			"sandbox": object(props{"source": str}, "source"),
			"inputs": arrayOf(object(props{"name": str,
				"type":     map[string]any{"type": "string", "enum": appconfig.InputTypes},
				"required": boolean, "sensitive": boolean, "default": described(map[string]any{}, "left out when sensitive"),
				"description": str}, "name", "type", "required", "sensitive")),
			"components": arrayOf(object(props{"name": str, "type": str,
				"source": described(str, "a terraform_module's module or a helm_chart's chart: a directory of the config"),
				"image":  described(str, "a container_image's image reference"), "file": str,
				"dependencies":          described(arrayOf(str), "effective: declared and implied by template references"),
				"declared_dependencies": arrayOf(str)}, "name", "type", "file", "dependencies", "declared_dependencies")),
			"levels": described(arrayOf(arrayOf(str)), "the components grouped for deployment: each level depends only on earlier ones"),
			"files":  arrayOf(str),
		}, "app_id", "version", "created_at", "app", "sandbox", "inputs", "components", "levels", "files"),
		"AppConfigList": object(props{"configs": arrayOf(object(props{"version": integer, "created_at": dateTime},
			"version", "created_at"))}, "configs"),
	}
}

// withSchemas adds more schemas to the document's.
func withSchemas(base map[string]any, more ...map[string]any) map[string]any {
	for _, m := range more {
		for k, v := range m {
			base[k] = v
		}
	}
	return base
}
