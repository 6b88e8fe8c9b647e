package api

import (
	"context"
	"errors"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/store"
)

// deployConfig starts a deploy_config operation: the install is brought to
// the version asked for. An unknown version, or one the install's inputs do
// not satisfy, is a 422 naming config_version.
func (s *Server) deployConfig(c echo.Context) error {
	ctx := c.Request().Context()
	inst, req, err := pathRequest[wire.DeployConfigRequest](c, s.store.GetInstall)
	if err != nil {
		return err
	}
	version, err := s.deployVersion(ctx, inst, req.ConfigVersion)
	if err != nil {
		return err
	}
	return s.runOperation(c, inst, store.InstallOperation{Kind: store.OpDeployConfig, PlanOnly: req.PlanOnly, ConfigVersion: version,
		InMaintenanceWindow: req.InMaintenanceWindow})
}

// deployVersion is the config version a deploy asks for, checked: it
// exists, and the install's inputs satisfy it. nil is the latest.
func (s *Server) deployVersion(ctx context.Context, inst store.Install, asked *int) (int, error) {
	version, cfg, err := s.appVersion(ctx, inst.OrgID, inst.AppID, asked)
	if err != nil {
		return 0, err
	}
	return version, takesInputs(cfg, version, inst)
}

// appVersion is the app's config version asked for (nil: the latest),
// loaded; an unknown one is a 422 naming config_version.
func (s *Server) appVersion(ctx context.Context, org, appID string, asked *int) (int, *appconfig.Config, error) {
	var (
		ac  store.AppConfig
		err error
	)
	switch {
	case asked == nil:
		ac, err = s.store.LatestAppConfig(ctx, org, appID)
		if errors.Is(err, store.ErrNotFound) {
			return 0, nil, errNoConfig(appID)
		}
	case *asked < 1:
		return 0, nil, apierr.Invalid("config_version", "%d is not a version (1, 2, …); leave it out for the latest", *asked)
	default:
		ac, err = s.store.GetAppConfig(ctx, org, appID, *asked)
		if errors.Is(err, store.ErrNotFound) {
			return 0, nil, s.unknownVersion(ctx, org, appID, *asked)
		}
	}
	if err != nil {
		return 0, nil, err
	}
	cfg, err := loadConfig(ac)
	return ac.Version, cfg, err
}

// takesInputs checks that the install's inputs satisfy a config version:
// every required input is set, every value parses (never echoed).
func takesInputs(cfg *appconfig.Config, version int, inst store.Install) error {
	given := map[string]string{}
	for _, in := range inst.Inputs {
		given[in.Name] = in.Value
	}
	for _, in := range cfg.Inputs {
		v, ok := given[in.Name]
		switch {
		case !ok && in.Required:
			return unprocessable("config_version", "config version %d requires input %q, which the install does not set", version, in.Name)
		case !ok:
		case parses(in.Type, v) != nil:
			return unprocessable("config_version", "config version %d takes input %q as a %s: the install's value is not one", version, in.Name, in.Type)
		}
	}
	return nil
}

func parses(typ, value string) error {
	_, err := appconfig.ParseInput(typ, value)
	return err
}

// unknownVersion is the 422 of a config version the app does not have,
// naming the latest it has.
func (s *Server) unknownVersion(ctx context.Context, org, appID string, asked int) error {
	latest, err := s.store.LatestConfigVersion(ctx, org, appID)
	if err != nil {
		return err
	}
	if latest == 0 {
		return unprocessable("config_version", "the app has no config version %d: it has no config yet", asked)
	}
	return unprocessable("config_version", "the app has no config version %d (the latest is %d)", asked, latest)
}
