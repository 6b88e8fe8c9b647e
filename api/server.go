package api

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/authlimit"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/releasebundle"
	"github.com/outpost-dev/outpost/store"
)

// Config is what the control API needs.
type Config struct {
	Store *store.Store
	// Ops starts and awaits the workflows behind commands. When nil, the
	// routes that need it answer 503.
	Ops    Operations
	Logger *slog.Logger
	// OnlineWindow: a runner is online if it was last seen within it
	// (default 90s).
	OnlineWindow time.Duration
	// GatewayURL is the gateway's public URL as runners reach it (http or
	// https), which the runner's `helm install` command points them at. When
	// empty, that route answers 409.
	GatewayURL string
	// RunnerImage is the runner image the `helm install` command installs
	// unless the request names one: repository[:tag][@sha256:digest]
	// (default: the runner chart's repository and appVersion).
	RunnerImage string
	// AuthLimiter counts failed authentications (API tokens, the dashboard's
	// sign-in); nil makes one with authlimit's defaults. The gateway may
	// share it.
	AuthLimiter *authlimit.Limiter
	// FollowMax bounds how long one log follow stream lasts before it ends
	// with a `resume` event (default DefaultFollowMax).
	FollowMax time.Duration
	// SessionIdle and SessionLifetime end a dashboard session idle that long,
	// or that long after sign-in (defaults store.DefaultSessionIdle and
	// store.DefaultSessionLifetime).
	SessionIdle, SessionLifetime time.Duration
	// PrincipalCacheTTL is how long a credential's user and roles are kept
	// in memory (default DefaultPrincipalCacheTTL): how long a change made
	// through another replica may take to be seen here.
	PrincipalCacheTTL time.Duration
	// VendorRegistry is the vendor registry as this process reaches it,
	// which release bundles are exported from. When Address is empty, that
	// route answers 503.
	VendorRegistry protocol.RegistryAccess
	// VendorBlobs, when this process serves the vendor registry, opens its
	// blobs from its storage: a bundle export reads them from there rather
	// than over HTTP (nil: over HTTP).
	VendorBlobs releasebundle.BlobFiles
	// BundleDir is where a release bundle's manifests, index and
	// signature are laid out before it is streamed (default: the system's
	// temporary directory).
	BundleDir string
}

// DefaultPrincipalCacheTTL is how long a checked credential is cached.
const DefaultPrincipalCacheTTL = 10 * time.Second

// Operations starts and waits for durable operations (Temporal workflows).
// Defined here, implemented in package worker.
//
// An error wrapping store.ErrConflict means the operation cannot start now
// (the API answers 409); any other error is answered 503.
type Operations interface {
	// StartInstallCommand starts the workflow cmd.WorkflowID that runs cmd.
	StartInstallCommand(ctx context.Context, cmd store.InstallCommand) error
	// StartActionRun starts the workflow run.WorkflowID that runs an action.
	StartActionRun(ctx context.Context, run store.ActionRun) error
	// StartRunbookRun starts (or, resumed, starts again) the workflow
	// run.WorkflowID that runs a runbook.
	StartRunbookRun(ctx context.Context, run store.RunbookRun) error
	// SignalRunbookApproval tells a runbook run its gate (step) is approved.
	SignalRunbookApproval(ctx context.Context, workflowID string, step int) error
	// StartSupportBundle starts the workflow b.WorkflowID that collects b.
	StartSupportBundle(ctx context.Context, b store.SupportBundle) error
	// StartKubeLogs starts the workflow workflowID of a logs request.
	StartKubeLogs(ctx context.Context, workflowID string, req contract.KubeLogsRequest) error
	// CancelWorkflow asks a running workflow to stop.
	CancelWorkflow(ctx context.Context, workflowID string) error
	// AwaitWorkflow returns when the workflow has closed, or ctx is done.
	AwaitWorkflow(ctx context.Context, workflowID string) error
	// StartOperation starts the workflow op.WorkflowID that runs an install
	// operation (provision, deprovision, deploy…).
	StartOperation(ctx context.Context, op store.InstallOperation) error
	// SignalApproval approves or denies a step's plan.
	SignalApproval(ctx context.Context, workflowID, step string, approve bool) error
	// StartBuild starts the workflow b.WorkflowID that runs a queued build.
	StartBuild(ctx context.Context, b store.Build) error
	// SetDriftSchedule creates or updates the install's schedule of drift
	// checks, one every interval; 0 deletes it.
	SetDriftSchedule(ctx context.Context, installID string, every time.Duration) error
	// StartRelease starts the workflow r.WorkflowID that runs a release.
	StartRelease(ctx context.Context, r store.Release) error
	// SignalRelease pauses, resumes or cancels a running release.
	SignalRelease(ctx context.Context, workflowID, action string) error
	// StartDelivery starts the workflow that delivers a notification.
	StartDelivery(ctx context.Context, orgID, deliveryID string) error
}

// DefaultOnlineWindow is how recently a runner must have been seen to be
// shown online, unless Config says otherwise.
const DefaultOnlineWindow = store.DefaultOnlineWindow

// DefaultFollowMax is how long a log follow stream lasts at most unless
// Config says otherwise: then it ends with a `resume` event and the client
// reconnects after the last cursor it got.
const DefaultFollowMax = 30 * time.Minute

// MaxBodyBytes is the largest request body the API reads.
const MaxBodyBytes = 1 << 20

// codeUnavailable is the error code of a 503.
const codeUnavailable = "unavailable"

// Server is the control API.
type Server struct {
	store        *store.Store
	ops          Operations
	log          *slog.Logger
	onlineWindow time.Duration
	gatewayURL   string
	runnerImage  string
	registry     protocol.RegistryAccess
	vendorBlobs  releasebundle.BlobFiles
	bundleDir    string
	limiter      *authlimit.Limiter
	now          func() time.Time

	principals                   *principalCache
	sessionIdle, sessionLifetime time.Duration

	// followTick is how often a log follower looks again without being woken
	// (a lost notification) and sends a keep-alive comment.
	followTick time.Duration
	// logGrace is how long a follower of a finished job waits for lines the
	// runner reported (last_seq) but has not delivered yet.
	logGrace time.Duration
	// followMax bounds one follow stream (Config.FollowMax).
	followMax time.Duration
	// followIdle, if set, is called each time a log follower has sent all it
	// found and starts waiting (for tests).
	followIdle func(job store.Job, sent store.LogCursor)

	// draining ends when Drain is called.
	draining context.Context
	drain    context.CancelFunc

	routes  []route
	openAPI []byte
}

// New returns the control API. It panics if cfg.Store is nil: that is a
// wiring mistake, not a condition to handle.
func New(cfg Config) *Server {
	if cfg.Store == nil {
		panic("api.New: Config.Store is required")
	}
	s := &Server{
		store:           cfg.Store,
		ops:             cfg.Ops,
		log:             cfg.Logger,
		onlineWindow:    cfg.OnlineWindow,
		gatewayURL:      cfg.GatewayURL,
		runnerImage:     cfg.RunnerImage,
		registry:        cfg.VendorRegistry,
		vendorBlobs:     cfg.VendorBlobs,
		bundleDir:       cfg.BundleDir,
		limiter:         cfg.AuthLimiter,
		followMax:       cfg.FollowMax,
		principals:      newPrincipalCache(cmp.Or(cfg.PrincipalCacheTTL, DefaultPrincipalCacheTTL)),
		sessionIdle:     cmp.Or(cfg.SessionIdle, store.DefaultSessionIdle),
		sessionLifetime: cmp.Or(cfg.SessionLifetime, store.DefaultSessionLifetime),
		now:             func() time.Time { return time.Now().UTC() },
		followTick:      15 * time.Second,
		logGrace:        10 * time.Second,
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.draining, s.drain = context.WithCancel(context.Background())
	if s.onlineWindow <= 0 {
		s.onlineWindow = DefaultOnlineWindow
	}
	if s.limiter == nil {
		s.limiter = authlimit.New(authlimit.Config{})
	}
	if s.followMax <= 0 {
		s.followMax = DefaultFollowMax
	}
	if s.runnerImage == "" {
		s.runnerImage = DefaultRunnerImage
	}
	s.routes = s.routeTable()
	for _, r := range s.routes {
		if _, ok := permScope[r.doc.need]; !ok && !r.doc.public {
			panic(fmt.Sprintf("api.New: route %s %s declares no permission (need)", r.method, r.path))
		}
	}
	doc, err := openAPIDocument(s.routes)
	if err != nil {
		panic(fmt.Sprintf("api.New: marshal the OpenAPI document: %v", err))
	}
	s.openAPI = doc
	return s
}

// Handler returns an *echo.Echo with everything mounted: /healthz and the /v1
// routes, JSON errors everywhere (unknown routes too) and panic recovery
// (the caller may mount more beside them: the dashboard).
func (s *Server) Handler() *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = apierr.Handler(s.log)
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			s.log.Error("panic in handler", "method", c.Request().Method, "path", c.Path(), "err", err, "stack", string(stack))
			return err
		},
	}))
	e.GET("/healthz", s.healthz, limitBody(MaxBodyBytes))
	s.Register(e)
	return e
}

// Register mounts the /v1 routes, and single sign-on's /auth/oidc/
// (oidc.go), on an existing echo (the gateway may share a listener in dev).
// The caller should use apierr.Handler as the echo's HTTPErrorHandler so
// errors answer JSON.
//
// Every route but a GET is audited (audit.go), and the GETs marked audited.
//
// Middleware is per route, not per group: an echo group with middleware
// catches every path below it, which would answer 404 where 405 is right.
func (s *Server) Register(e *echo.Echo) {
	for _, r := range s.routes {
		var mw []echo.MiddlewareFunc
		if r.method != http.MethodGet || r.doc.audited {
			mw = append(mw, s.audited(r)) // outermost: it sees the refusals below too
		}
		mw = append(mw, limitBody(r.bodyLimit()))
		if !r.doc.public {
			mw = append(mw, s.authenticate, s.authorize(r))
		}
		if r.method == http.MethodGet && !r.doc.events && !r.doc.streamed {
			mw = append(mw, etagged)
		}
		e.Add(r.method, "/v1"+r.path, r.handler, mw...)
	}
	s.registerOIDC(e)
}

// healthz answers once the database does.
func (s *Server) healthz(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 3*time.Second)
	defer cancel()
	if err := s.store.Ping(ctx); err != nil {
		s.log.Warn("health check failed", "err", err)
		return c.JSON(http.StatusServiceUnavailable, wire.Health{Status: "unavailable"})
	}
	return c.JSON(http.StatusOK, wire.Health{Status: "ok"})
}

func (s *Server) serveOpenAPI(c echo.Context) error {
	return c.JSONBlob(http.StatusOK, s.openAPI)
}

// limitBody refuses bodies over n bytes: at once when Content-Length says
// so, otherwise when reading passes the limit (apierr.Bind answers 413).
func limitBody(n int64) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if req.ContentLength > n {
				return tooLarge(n)
			}
			if req.Body != nil {
				req.Body = http.MaxBytesReader(c.Response(), req.Body, n)
			}
			return next(c)
		}
	}
}

func tooLarge(n int64) error {
	return apierr.New(http.StatusRequestEntityTooLarge, protocol.CodeTooLarge, "", "the body is larger than %d bytes", n)
}

const principalKey = "outpost.principal"

// orgID is the org of the request's credential.
func orgID(c echo.Context) string {
	return c.Get(principalKey).(principal).orgID
}

// caller is who made the request (authenticated).
func caller(c echo.Context) principal {
	return c.Get(principalKey).(principal)
}

// onField names the field a store conflict is about, e.g. a name already
// taken; other errors pass through.
func onField(err error, field string) error {
	if !errors.Is(err, store.ErrConflict) {
		return err
	}
	he := *apierr.FromStore(err)
	he.Body.Field = field
	return &he
}

// opsInstall is the path's install (in the token's org) for a request that
// starts or changes its workflows: errNoOps without a workflow service.
func (s *Server) opsInstall(c echo.Context) (store.Install, error) {
	inst, err := s.store.GetInstall(c.Request().Context(), orgID(c), c.Param("id"))
	if err == nil && s.ops == nil {
		err = errNoOps()
	}
	return inst, err
}

// errNoOps answers the routes that need Operations when there are none.
func errNoOps() error {
	return apierr.New(http.StatusServiceUnavailable, codeUnavailable, "", "this server runs no workflow service: commands are not available")
}

// opsFailed answers an Operations error: 409 for a conflict, otherwise 503.
// The cause stays in the returned chain, so apierr.Handler logs it, but is
// not sent.
func opsFailed(what string, err error) error {
	if errors.Is(err, store.ErrConflict) {
		return apierr.New(http.StatusConflict, protocol.CodeConflict, "", "%s: %v", what, err)
	}
	he := apierr.New(http.StatusServiceUnavailable, codeUnavailable, "", "%s failed: the workflow service is not available; try again", what)
	return fmt.Errorf("%w: %w", he, err)
}

// queryInt reads an optional integer query parameter within [lo, hi].
func queryInt(c echo.Context, name string, def, lo, hi int) (int, error) {
	v := c.QueryParam(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, apierr.Invalid(name, "%q must be a whole number from %d to %d", v, lo, hi)
	}
	return n, nil
}
