package api

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// What starting a run of an install's action or runbook takes: the config
// version the install runs, the inputs checked, the run recorded failed
// when its workflow does not start.

// installConfig loads the config version an install runs (the latest
// before its first provision).
func (s *Server) installConfig(ctx context.Context, inst store.Install) (*appconfig.Config, int, error) {
	var ac store.AppConfig
	var err error
	if inst.ConfigVersion > 0 {
		ac, err = s.store.GetAppConfig(ctx, inst.OrgID, inst.AppID, inst.ConfigVersion)
	} else {
		ac, err = s.store.LatestAppConfig(ctx, inst.OrgID, inst.AppID)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, 0, errNoConfig(inst.AppID)
	}
	if err != nil {
		return nil, 0, err
	}
	cfg, err := loadConfig(ac)
	return cfg, ac.Version, err
}

// pathInstallConfig loads the config version the path's install runs.
func (s *Server) pathInstallConfig(c echo.Context) (*appconfig.Config, int, error) {
	ctx := c.Request().Context()
	inst, err := s.store.GetInstall(ctx, orgID(c), c.Param("id"))
	if err != nil {
		return nil, 0, err
	}
	return s.installConfig(ctx, inst)
}

// configDef finds the definition the path parameter param ("action",
// "runbook") names in the config version the install runs, with lookup:
// 404 when it has none of that name.
func configDef[D any](s *Server, c echo.Context, inst store.Install, param string,
	lookup func(*appconfig.Config, string) (D, bool)) (D, int, error) {
	var zero D
	ctx, name := c.Request().Context(), c.Param(param)
	cfg, version, err := s.installConfig(ctx, inst)
	if err != nil {
		return zero, 0, err
	}
	def, ok := lookup(cfg, name)
	if !ok {
		return zero, 0, apierr.New(http.StatusNotFound, protocol.CodeNotFound, "", "config version %d of install %s has no %s %q",
			version, inst.Name, param, name)
	}
	return def, version, nil
}

// runOrder is a checked request to start a run of def, the path's
// install's action or runbook.
type runOrder[D any] struct {
	inst    store.Install
	def     D
	version int // the config version def is of
	// plain and sensitive are the run's inputs.
	plain, sensitive map[string]string
	// by and byUser name who asked (startedBy).
	by, byUser string
}

// readRunOrder reads a request to start a run, in this order: the path's
// install, the body's inputs (bind), the definition (find: 404 when it has
// none of that name, 409 when it may not run), the inputs (check: a 400
// names the first bad one) and that this server starts workflows (503).
func readRunOrder[D any](s *Server, c echo.Context, bind func(echo.Context) (map[string]string, error),
	find func(echo.Context, store.Install) (D, int, error),
	check func(D, map[string]string) (plain, sensitive map[string]string, err error)) (runOrder[D], error) {
	var o runOrder[D]
	ctx := c.Request().Context()
	inst, err := s.store.GetInstall(ctx, orgID(c), c.Param("id"))
	if err != nil {
		return o, err
	}
	given, err := bind(c)
	if err != nil {
		return o, err
	}
	def, version, err := find(c, inst)
	if err != nil {
		return o, err
	}
	plain, sensitive, err := check(def, given)
	if err != nil {
		return o, err
	}
	if s.ops == nil {
		return o, errNoOps()
	}
	by, byUser := startedBy(ctx)
	return runOrder[D]{inst: inst, def: def, version: version, plain: plain, sensitive: sensitive, by: by, byUser: byUser}, nil
}

// bodyInputs reads a request body of type B and the inputs in it (in).
func bodyInputs[B any](in func(B) map[string]string) func(echo.Context) (map[string]string, error) {
	return func(c echo.Context) (map[string]string, error) {
		var req B
		err := apierr.Bind(c, &req)
		return in(req), err
	}
}

// checkedInputs checks given with check (an action's or a runbook's
// CheckRunInputs: a 400 names the first bad one) and parts them by decls
// into plain and sensitive.
func checkedInputs(check func(map[string]string) (map[string]any, error), decls []appconfig.Input,
	given map[string]string) (plain, sensitive map[string]string, err error) {
	if _, err := check(given); err != nil {
		var ps appconfig.Problems
		if errors.As(err, &ps) && len(ps) > 0 {
			msgs := make([]string, len(ps))
			for i, p := range ps {
				msgs[i] = p.Message
			}
			return nil, nil, apierr.Invalid(ps[0].Key, "%s", strings.Join(msgs, "; "))
		}
		return nil, nil, apierr.Invalid("inputs", "%v", err)
	}
	plain, sensitive = map[string]string{}, map[string]string{}
	for k, v := range given {
		if slices.ContainsFunc(decls, func(in appconfig.Input) bool { return in.Name == k && in.Sensitive }) {
			sensitive[k] = v
		} else {
			plain[k] = v
		}
	}
	return plain, sensitive, nil
}

// startRecordedRun starts the workflow of a recorded run (what: "action
// run", "runbook run"); one that cannot start is recorded failed (finish),
// so the run does not stay queued.
func (s *Server) startRecordedRun(ctx context.Context, what, runID string, start func(context.Context) error,
	finish func(ctx context.Context, runID string, st status.Job, why string) error) error {
	return s.startRecorded(ctx, what, runID, start, func(ctx context.Context, _ error) error {
		return finish(ctx, runID, status.JobFailed, "the run's workflow could not be started")
	})
}

// startRecorded starts the workflow of a row just recorded (what: "command",
// "action run"…; id); when it cannot start, failed records the row failed
// (why it could not, from the start's error), so it does not stay queued,
// and the answer is opsFailed's (a 409 for a conflict, else a 503).
func (s *Server) startRecorded(ctx context.Context, what, id string, start func(context.Context) error,
	failed func(ctx context.Context, err error) error) error {
	err := start(ctx)
	if err == nil {
		return nil
	}
	if ferr := failed(context.WithoutCancel(ctx), err); ferr != nil {
		article := "a "
		if strings.ContainsRune("aeiou", rune(what[0])) {
			article = "an "
		}
		key := what[strings.LastIndex(what, " ")+1:] // "run", "command", "bundle"
		s.log.Error("recording "+article+what+" that did not start failed", key, id, "err", ferr)
	}
	return opsFailed("starting the "+what, err)
}
