package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/authlimit"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/notify"
)

// DefaultIntervals are what runners are told unless configured otherwise.
var DefaultIntervals = protocol.Intervals{
	ClaimWaitMS:       50_000,
	JobHeartbeatMS:    10_000,
	LeaseMS:           60_000,
	RunnerHeartbeatMS: 30_000,
	QuietHeartbeatMS:  300_000,
	LogBatchMS:        250,
}

// A claim that finds the jobs it could run locked by another transaction
// (store.ErrJobsBusy) asks again after busyRetry, doubling up to
// busyRetryMax while they stay locked: the store's own locks last a
// statement or two, but a session left idle in a transaction would
// otherwise cost 50 claim queries a second.
const (
	busyRetry    = 20 * time.Millisecond
	busyRetryMax = time.Second
)

// Config configures a gateway.
type Config struct {
	Store  *store.Store
	Logger *slog.Logger
	// Intervals handed to runners; zero fields take DefaultIntervals.
	Intervals protocol.Intervals
	// ReapInterval is how often expired leases are looked for (default a
	// quarter of the lease, between 1 and 15 seconds).
	ReapInterval time.Duration
	// TouchInterval is how often runners' last-seen times are written, in one
	// statement for all of them (default 10s).
	TouchInterval time.Duration
	// AuthCacheTTL bounds how long a runner token is trusted without asking the database (default
	// 10m; the bus clears the cache at once): a safety net, longer than two claim waits.
	AuthCacheTTL time.Duration
	// EmptyTTL bounds how long "this runner has no queued job" is trusted
	// without a query, in case a notification was lost (default 10m).
	EmptyTTL time.Duration
	// SweepInterval is how often expired support bundles, logs requests' lines and audit events
	// past their retention are deleted (default 1h; the API stops showing a bundle the moment it
	// expires).
	SweepInterval time.Duration
	// AuditRetention is how long audit events are kept (default store.DefaultAuditRetention).
	AuditRetention time.Duration
	// AuthLimiter counts failed authentications (registration, runner and
	// state tokens); nil makes one with authlimit's defaults. The API may
	// share it.
	AuthLimiter *authlimit.Limiter
	// MaxJobLogBytes is each job attempt's log quota (default
	// protocol.MaxJobLogBytes): past it the log ends with
	// protocol.LogTruncatedMarker.
	MaxJobLogBytes int64
	// Metrics is told of claims and completions; nil tells nothing.
	Metrics Metrics
	// HealthInterval is how often runners read their components' health
	// (default DefaultHealthInterval; componenthealth.go).
	HealthInterval time.Duration
}

// Metrics records what the gateway sees happen to jobs (package metrics
// implements it for Prometheus).
type Metrics interface {
	// JobClaimed: a job of that type was claimed, waited after being queued
	// (first attempts only: a retry's wait includes its earlier attempts).
	JobClaimed(jobType string, waited time.Duration)
	// JobCompleted: a job of that type ended with status after running for ran.
	JobCompleted(jobType, status string, ran time.Duration)
}

type noMetrics struct{}

func (noMetrics) JobClaimed(string, time.Duration)           {}
func (noMetrics) JobCompleted(string, string, time.Duration) {}

// Gateway serves /runner/v1.
type Gateway struct {
	cfg   Config
	store *store.Store
	log   *slog.Logger
	iv    protocol.Intervals

	mu       sync.Mutex
	runners  map[string]*runnerState
	auth     map[string]authEntry // by token hash
	authGen  uint64               // bumped whenever auth is cleared
	draining bool                 // Drain was called: claims answer 204 at once
	credKeys map[string]*orgKeys  // signing keys by org (credentialKeys)
	clock    *claimClock          // ends held claims (claimclock.go)
}

type authEntry struct {
	runner  store.Runner
	expires time.Time
}

// runnerState is what the gateway knows about one runner between requests.
type runnerState struct {
	gen       uint64 // bumped on every notification for the runner
	emptyGen  uint64 // gen at which a claim last found nothing
	emptyAt   time.Time
	emptyOK   bool
	emptyFor  store.Claimant // what the claim that found nothing could run
	waiters   map[chan struct{}]struct{}
	seen      bool // seen since the last touch flush
	version   string
	platform  string
	caps      string
	infoKnown bool
	// customer is the policy digest, pause and consents last recorded;
	// paused: the runner said its customer paused it (no job is handed out).
	customer string
	paused   bool
	// health is the runner's component health spec (componenthealth.go).
	health healthSpecState
	// endedRound is the claim round the runner's last heartbeat ended
	// (protocol.RunnerHeartbeatRequest.EndRound).
	endedRound string
}

// New returns a gateway; call Run to start its background loops.
func New(cfg Config) *Gateway {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	iv := cfg.Intervals
	def := DefaultIntervals
	if iv.ClaimWaitMS <= 0 {
		iv.ClaimWaitMS = def.ClaimWaitMS
	}
	if iv.JobHeartbeatMS <= 0 {
		iv.JobHeartbeatMS = def.JobHeartbeatMS
	}
	if iv.LeaseMS <= 0 {
		iv.LeaseMS = def.LeaseMS
	}
	if iv.RunnerHeartbeatMS <= 0 {
		iv.RunnerHeartbeatMS = def.RunnerHeartbeatMS
	}
	if iv.LogBatchMS <= 0 {
		iv.LogBatchMS = def.LogBatchMS
	}
	if cfg.ReapInterval <= 0 {
		cfg.ReapInterval = min(max(iv.Lease()/4, time.Second), 15*time.Second)
	}
	if cfg.TouchInterval <= 0 {
		cfg.TouchInterval = 10 * time.Second
	}
	if cfg.SweepInterval <= 0 {
		cfg.SweepInterval = time.Hour
	}
	if cfg.AuthCacheTTL <= 0 {
		cfg.AuthCacheTTL = 10 * time.Minute
	}
	if cfg.HealthInterval <= 0 {
		cfg.HealthInterval = DefaultHealthInterval
	}
	if cfg.EmptyTTL <= 0 {
		cfg.EmptyTTL = 10 * time.Minute
	}
	if cfg.AuthLimiter == nil {
		cfg.AuthLimiter = authlimit.New(authlimit.Config{})
	}
	if cfg.Metrics == nil {
		cfg.Metrics = noMetrics{}
	}
	return &Gateway{cfg: cfg, store: cfg.Store, log: cfg.Logger, iv: iv,
		runners: map[string]*runnerState{}, auth: map[string]authEntry{}, credKeys: map[string]*orgKeys{},
		clock: newClaimClock(iv.ClaimWait())}
}

// Intervals are the intervals this gateway hands out.
func (g *Gateway) Intervals() protocol.Intervals { return g.iv }

// Handler returns an echo instance serving only the gateway, for a listener
// of its own.
func (g *Gateway) Handler() http.Handler {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = apierr.Handler(g.log)
	g.Register(e)
	return e
}

// Register mounts /runner/v1 on e.
func (g *Gateway) Register(e *echo.Echo) {
	for _, r := range g.Routes() {
		mw := []echo.MiddlewareFunc{middleware.BodyLimit(strconv.FormatInt(r.MaxBody, 10) + "B")}
		switch r.Auth {
		case AuthRunner:
			mw = append(mw, g.authenticate)
		case AuthState:
			mw = append(mw, g.authenticateState)
		}
		e.Add(r.Method, r.Path, r.handler, mw...)
	}
}

// Run runs the lease reaper and the last-seen flusher until ctx is done.
func (g *Gateway) Run(ctx context.Context) error {
	stop := g.store.Bus().Watch(g.onNotify)
	defer stop()
	reap := time.NewTicker(g.cfg.ReapInterval)
	defer reap.Stop()
	touch := time.NewTicker(g.cfg.TouchInterval)
	defer touch.Stop()
	sweep := time.NewTicker(g.cfg.SweepInterval)
	defer sweep.Stop()
	for {
		select {
		case <-ctx.Done():
			g.flushSeen(context.WithoutCancel(ctx))
			return nil
		case <-reap.C:
			if ids, err := g.store.ExpireLeases(ctx); err != nil {
				g.log.Warn("gateway: expire leases", "err", err)
			} else if len(ids) > 0 {
				g.log.Info("gateway: leases expired, attempts marked lost", "jobs", ids)
			}
		case <-touch.C:
			g.flushSeen(ctx)
		case <-sweep.C:
			g.sweep(ctx)
		}
	}
}

// sweep deletes what outlived its retention.
func (g *Gateway) sweep(ctx context.Context) {
	for _, sw := range []struct {
		what string
		run  func(context.Context) (int64, error)
	}{
		{"expired support bundles", g.store.SweepSupportBundles},
		{"logs requests' lines past their retention", g.store.SweepLogsRequestLines},
		{"audit events past their retention", func(ctx context.Context) (int64, error) {
			return g.store.SweepAuditEvents(ctx, g.cfg.AuditRetention)
		}},
	} {
		if n, err := sw.run(ctx); err != nil {
			g.log.Warn("gateway: deleting "+sw.what, "err", err)
		} else if n > 0 {
			g.log.Info("gateway: deleted "+sw.what, "rows", n)
		}
	}
}

// onNotify runs for every notification: it wakes the runner's waiting claims
// and forgets that it had no work; a reset forgets everything.
func (g *Gateway) onNotify(topic string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case topic == "":
		for _, st := range g.runners {
			st.emptyOK = false
			st.gen++
			wakeAll(st)
		}
		clear(g.auth)
		g.authGen++
	case topic == store.TopicRunnerTokens:
		clear(g.auth)
		g.authGen++
	case strings.HasPrefix(topic, "round-end:"):
		runnerID, round, _ := strings.Cut(strings.TrimPrefix(topic, "round-end:"), ":")
		if st := g.runners[runnerID]; st != nil {
			st.endedRound = round
			wakeAll(st)
		}
	case strings.HasPrefix(topic, "runner:"):
		if st := g.runners[strings.TrimPrefix(topic, "runner:")]; st != nil {
			st.gen++
			st.emptyOK = false
			wakeAll(st)
		}
	}
}

// Drain answers every waiting claim now, with no job, and every later claim
// at once, claiming nothing: a gateway shutting down (http.Server's
// RegisterOnShutdown) lets its runners go and poll the next one rather than
// holding them until the shutdown times out, during which their heartbeats
// and completions could not get through.
func (g *Gateway) Drain() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.draining = true
	for _, st := range g.runners {
		wakeAll(st)
	}
}

func wakeAll(st *runnerState) {
	for ch := range st.waiters {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// state returns the runner's state; callers hold g.mu.
func (g *Gateway) state(runnerID string) *runnerState {
	st := g.runners[runnerID]
	if st == nil {
		st = &runnerState{waiters: map[chan struct{}]struct{}{}}
		g.runners[runnerID] = st
	}
	return st
}

func (g *Gateway) markSeen(runnerID string) {
	g.mu.Lock()
	g.state(runnerID).seen = true
	g.mu.Unlock()
}

// flushSeen writes last_seen_at for every runner seen since the last flush
// or holding a claim open now — one statement whatever their number.
func (g *Gateway) flushSeen(ctx context.Context) {
	var ids []string
	g.mu.Lock()
	for id, st := range g.runners {
		if st.seen || len(st.waiters) > 0 {
			ids = append(ids, id)
			st.seen = false
		}
	}
	g.mu.Unlock()
	if err := g.store.TouchRunners(ctx, ids, time.Now().UTC()); err != nil {
		g.log.Warn("gateway: record runners seen", "err", err)
	}
}

func runnerFrom(c echo.Context) store.Runner { return c.Get("runner").(store.Runner) }

// authenticate checks the runner token, from a short-lived cache when it can
// (after the limiter: a source or prefix that failed too often is refused).
func (g *Gateway) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		tok, ok := strings.CutPrefix(c.Request().Header.Get("Authorization"), "Bearer ")
		if !ok || tok == "" {
			return apierr.FromStore(store.ErrUnauthorized)
		}
		hash := store.HashToken(tok)
		now := time.Now()
		g.mu.Lock()
		ent, hit := g.auth[hash]
		gen := g.authGen
		g.mu.Unlock()
		// Every token is checked: runners behind the same address as a
		// guesser keep renewing their leases.
		if !hit || now.After(ent.expires) { // the limiter stays off the cached hot path
			r, err := g.store.AuthenticateRunner(c.Request().Context(), tok)
			if err != nil {
				if errors.Is(err, store.ErrUnauthorized) {
					att := g.cfg.AuthLimiter.Begin(c.Request(), protocol.RunnerTokenPrefix, tok)
					if refused := att.Failed(c.Response().Header()); refused != nil {
						return refused
					}
				}
				return apierr.FromStore(err)
			}
			ent = authEntry{runner: r, expires: now.Add(g.cfg.AuthCacheTTL)}
			g.mu.Lock()
			// A revocation that arrived during the lookup may postdate what
			// it read: then don't cache it.
			if g.authGen == gen {
				g.auth[hash] = ent
			}
			g.mu.Unlock()
		}
		c.Set("runner", ent.runner)
		return next(c)
	}
}

func (g *Gateway) register(c echo.Context) error {
	var req protocol.RegisterRequest
	if err := apierr.Bind(c, &req); err != nil {
		return err
	}
	if req.RegistrationToken == "" {
		return apierr.Invalid("registration_token", "is required")
	}
	if err := checkPlatform(req.Platform); err != nil {
		return err
	}
	r, tok, err := g.store.RegisterRunner(c.Request().Context(), req.RegistrationToken,
		store.RunnerInfo{Name: req.Name, Version: req.Version, Platform: req.Platform, Capabilities: req.Capabilities})
	if err != nil {
		if errors.Is(err, store.ErrUnauthorized) {
			att := g.cfg.AuthLimiter.Begin(c.Request(), protocol.RegistrationTokenPrefix, req.RegistrationToken)
			if refused := att.Failed(c.Response().Header()); refused != nil {
				return refused
			}
		}
		return apierr.FromStore(err)
	}
	g.log.Info("gateway: runner registered", "runner", r.ID, "kind", r.Kind, "name", req.Name, "version", req.Version, "platform", req.Platform)
	return c.JSON(http.StatusOK, protocol.RegisterResponse{RunnerID: r.ID, Token: tok, Intervals: g.iv})
}

func (g *Gateway) runnerHeartbeat(c echo.Context) error {
	var req protocol.RunnerHeartbeatRequest
	if err := apierr.Bind(c, &req); err != nil {
		return err
	}
	if err := checkRound("end_round", req.EndRound); err != nil {
		return err
	}
	if err := checkPlatform(req.Platform); err != nil {
		return err
	}
	r := runnerFrom(c)
	caps := strings.Join(req.Capabilities, ",")
	g.mu.Lock()
	st := g.state(r.ID)
	// A heartbeat ending a round is the runner stopping its claims, often as
	// it shuts down: during a rolling update, the old pod's. It says nothing
	// new of the runner, so it does not record its version.
	changed := req.EndRound == "" && (!st.infoKnown || st.version != req.Version || st.platform != req.Platform || st.caps != caps)
	st.seen = true
	g.mu.Unlock()
	if req.EndRound != "" {
		g.endRound(c.Request().Context(), r.ID, req.EndRound)
	}
	if err := g.store.RecordConnectionErrors(c.Request().Context(), r.ID, req.ConnectionErrors); err != nil {
		return err
	}
	if req.Update != nil {
		if err := g.runnerUpdateReport(c.Request().Context(), r.ID, *req.Update); err != nil {
			return err
		}
	}
	if changed {
		if err := g.store.UpdateRunnerInfo(c.Request().Context(), r.ID,
			store.RunnerInfo{Version: req.Version, Platform: req.Platform, Capabilities: req.Capabilities}); err != nil {
			return err
		}
		g.mu.Lock()
		st.version, st.platform, st.caps, st.infoKnown = req.Version, req.Platform, caps, true
		g.mu.Unlock()
	}
	if req.EndRound == "" {
		if err := g.recordCustomer(c.Request().Context(), r.ID, st, req); err != nil {
			return err
		}
	}
	resp := protocol.RunnerHeartbeatResponse{RunnerID: r.ID, Intervals: g.iv}
	if err := g.componentHealth(c.Request().Context(), r, st, req, &resp); err != nil {
		return err
	}
	if req.AskHealthCheck {
		pending, err := g.store.RunnerHealthCheckPending(c.Request().Context(), r.ID, req.Version)
		if err != nil {
			return err
		}
		resp.HealthCheck = pending
	}
	return c.JSON(http.StatusOK, resp)
}

// jobHeartbeat renews the lease and, when asked to wait, holds the request
// until cancellation is requested, the inputs the runner waits for are given,
// or the wait ends: a cancel or the inputs reach the runner at once rather
// than at its next heartbeat.
func (g *Gateway) jobHeartbeat(c echo.Context) error {
	var req protocol.JobHeartbeatRequest
	if err := bindAttempt(c, &req, &req.Attempt); err != nil {
		return err
	}
	r := runnerFrom(c)
	ctx := c.Request().Context()
	jobID := c.Param("id")
	g.markSeen(r.ID)
	// Subscribe before reading, so a cancel (or the inputs) between the read
	// and the wait is not missed.
	woke, unsub := g.store.Bus().Subscribe(notify.JobTopic(jobID))
	defer unsub()
	expires, sig, err := g.store.HeartbeatJob(ctx, r.ID, jobID, req.Attempt, g.iv.Lease())
	if err != nil {
		return err
	}
	answer := func() bool { return sig.Cancel || (req.WantInputs && sig.Inputs != "") }
	wait := min(time.Duration(req.WaitMS)*time.Millisecond, g.iv.JobHeartbeat())
	if !answer() && wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
	loop:
		for {
			select {
			case <-woke:
				if sig, err = g.store.PendingSignals(ctx, r.ID, jobID, req.Attempt); err != nil {
					return err
				}
				if answer() {
					break loop
				}
			case <-t.C:
				break loop
			case <-ctx.Done():
				return nil
			}
		}
	}
	resp := protocol.JobHeartbeatResponse{LeaseExpiresAt: expires, CancelRequested: sig.Cancel}
	if req.WantInputs && sig.Inputs != "" {
		resp.Inputs = json.RawMessage(sig.Inputs)
	}
	return c.JSON(http.StatusOK, resp)
}

func (g *Gateway) logs(c echo.Context) error {
	var req protocol.LogsRequest
	if err := apierr.Bind(c, &req); err != nil {
		return err
	}
	r := runnerFrom(c)
	acked, err := g.store.AppendLogs(c.Request().Context(), r.ID, c.Param("id"), req.Attempt, req.Chunks, g.cfg.MaxJobLogBytes)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, protocol.LogsResponse{AckedSeq: acked})
}

// bindAttempt binds req, whose attempt (the field attempt points to) must be
// 1 or more.
func bindAttempt(c echo.Context, req any, attempt *int) error {
	if err := apierr.Bind(c, req); err != nil {
		return err
	}
	if *attempt < 1 {
		return apierr.Invalid("attempt", "must be 1 or more")
	}
	return nil
}

func (g *Gateway) complete(c echo.Context) error {
	var req protocol.CompleteRequest
	if err := bindAttempt(c, &req, &req.Attempt); err != nil {
		return err
	}
	r := runnerFrom(c)
	g.markSeen(r.ID)
	ran, err := g.store.CompleteJobRan(c.Request().Context(), r.ID, c.Param("id"), req)
	if err != nil {
		return err
	}
	if ran.Type != "" {
		g.cfg.Metrics.JobCompleted(ran.Type, req.Status, ran.Duration)
	}
	g.helmJobDone(r.ID, ran.Type, req.Status)
	return c.JSON(http.StatusOK, map[string]string{"status": req.Status})
}

// checkPlatform: a runner's platform is "" (an older runner: unknown) or
// terraform's "<os>_<arch>".
func checkPlatform(p string) error {
	if p != "" && !protocol.ValidPlatform(p) {
		return apierr.Invalid("platform", "must be <os>_<arch> as terraform names platforms, e.g. linux_amd64")
	}
	return nil
}
