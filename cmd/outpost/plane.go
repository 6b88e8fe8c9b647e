package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"golang.org/x/sync/errgroup"

	"github.com/outpost-dev/outpost/activities"
	"github.com/outpost-dev/outpost/api"
	"github.com/outpost-dev/outpost/api/gateway"
	"github.com/outpost-dev/outpost/dashboard"
	"github.com/outpost-dev/outpost/internal/httpserver"
	"github.com/outpost-dev/outpost/internal/metrics"
	"github.com/outpost-dev/outpost/internal/planemetrics"
	"github.com/outpost-dev/outpost/internal/proxied"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/releasebundle"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/worker"
)

// planeConfig says which parts of the control plane a process runs: `api`
// serves, `worker` works, `dev` does both (and migrates).
type planeConfig struct {
	common
	migrate bool // else a database that is behind is refused
	// gatewayURL is the gateway's URL as runners reach it; ownGateway
	// makes an empty one this process's gateway listener's (dev).
	gatewayURL string
	ownGateway bool
	serve      *serveConfig
	work       *workConfig
}

// serveConfig configures the API, the gateway and the vendor registry.
type serveConfig struct {
	listen         listenFlags
	intervals      protocol.Intervals
	auditRetention time.Duration
	registryListen string
	abuse          abuseFlags
}

// workConfig configures the worker: where runners reach the vendor
// registry (empty in a process that serves it: that one, in plain HTTP).
type workConfig struct {
	registryAddress   string
	registryPlainHTTP bool
	// publicURL is the dashboard's URL as users reach it: notifications
	// link there ("" in a process that serves the API: that one's).
	publicURL string
}

// plane is an assembled control plane; run it, then Close it.
type plane struct {
	log        *slog.Logger
	store      *store.Store
	temporal   client.Client
	registry   *registry.Server
	api        *api.Server
	gateway    *gateway.Gateway
	apiLn      net.Listener
	gatewayLn  net.Listener // nil when the API's listener serves both
	worker     sdkworker.Worker
	sweeper    *worker.Sweeper // with the worker: finishes operations their workflow left unfinished
	outbox     *worker.Outbox  // with the worker: dispatches the notification outbox, finds runners offline
	gatewayURL string
	limits     httpserver.Limits
	// metrics is the process's registry (served by -metrics-listen).
	metrics *prometheus.Registry
}

// assemble opens the store, dials Temporal and builds the parts cfg asks
// for, listening already, so that the addresses are known (and taken)
// before anything runs.
func assemble(ctx context.Context, log *slog.Logger, cfg planeConfig) (_ *plane, err error) {
	// Not the named result, which a failing return sets to nil.
	p := &plane{log: log, gatewayURL: cfg.gatewayURL, metrics: metrics.NewRegistry()}
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	if p.store, err = cfg.openStore(ctx, log, cfg.migrate); err != nil {
		return nil, err
	}
	if !cfg.migrate {
		if err := checkSchema(ctx, log, p.store); err != nil {
			return nil, err
		}
	}
	if p.temporal, err = worker.Dial(ctx, cfg.temporal, cfg.namespace, log); err != nil {
		return nil, err
	}
	ops := &worker.Operations{Client: p.temporal, TaskQueue: cfg.taskQueue}
	p.metrics.MustRegister(planemetrics.NewFleet(p.store, api.DefaultOnlineWindow))
	if cfg.serve != nil {
		if err := p.listen(ctx, cfg.serve, cfg.dataDir); err != nil {
			return nil, err
		}
		if p.gatewayURL == "" && cfg.ownGateway {
			p.gatewayURL = "http://" + p.gatewayAddr()
		}
		limiter, err := cfg.serve.abuse.limiter(log)
		if err != nil {
			return nil, err
		}
		if p.limits = cfg.serve.abuse.http; p.limits == (httpserver.Limits{}) {
			p.limits = httpserver.Defaults // a config built without flags (tests)
		}
		p.gateway = gateway.New(gateway.Config{Store: p.store, Logger: log, Intervals: cfg.serve.intervals, AuthLimiter: limiter,
			AuditRetention: cfg.serve.auditRetention, Metrics: planemetrics.NewGateway(p.metrics)})
		p.api = api.New(api.Config{Store: p.store, Ops: ops, Logger: log, GatewayURL: p.gatewayURL,
			AuthLimiter: limiter, FollowMax: cfg.serve.abuse.followMax, VendorRegistry: p.vendorRegistry(),
			VendorBlobs: p.vendorBlobs()})
	}
	if cfg.work != nil {
		oc := activities.OperationConfig{GatewayURL: p.gatewayURL,
			RegistryAddress: cfg.work.registryAddress, RegistryPlainHTTP: cfg.work.registryPlainHTTP}
		if oc.RegistryAddress == "" && p.registry != nil {
			oc.RegistryAddress, oc.RegistryPlainHTTP = p.registry.Addr(), true
		}
		notify := activities.NotifyConfig{DashboardURL: cfg.work.publicURL}
		if notify.DashboardURL == "" && p.apiLn != nil {
			notify.DashboardURL = p.apiURL()
		}
		wc := worker.Config{Client: p.temporal, Store: p.store, TaskQueue: cfg.taskQueue, Logger: log, Operations: oc, Notify: notify}
		p.worker = worker.New(wc)
		p.sweeper = &worker.Sweeper{Client: p.temporal, Store: p.store, Logger: log}
		p.outbox = worker.NewOutbox(wc)
	}
	return p, nil
}

// vendorRegistry is the vendor registry this process serves, which the
// API exports release bundles from (none when another process serves it).
func (p *plane) vendorRegistry() protocol.RegistryAccess {
	if p.registry == nil {
		return protocol.RegistryAccess{}
	}
	return protocol.RegistryAccess{Address: p.registry.Addr(), PlainHTTP: true}
}

// vendorBlobs opens the blobs of the vendor registry this process serves
// from its storage (nil when another process serves it).
func (p *plane) vendorBlobs() releasebundle.BlobFiles {
	if p.registry == nil {
		return nil
	}
	return p.registry
}

// listen starts the vendor registry and listens for the API and the
// gateway (on one listener when their addresses are equal).
func (p *plane) listen(ctx context.Context, cfg *serveConfig, dataDir string) (err error) {
	if p.registry, err = startRegistry(ctx, p.store, cfg.registryListen, dataDir); err != nil {
		return err
	}
	if p.registry != nil {
		p.log.Info("listening", "server", "vendor registry", "addr", p.registry.Addr())
	}
	trusted, err := cfg.abuse.proxied()
	if err != nil {
		return err
	}
	if p.apiLn, err = listenProxied("api", cfg.listen.api, trusted); err != nil {
		return err
	}
	if cfg.listen.gateway != "" && cfg.listen.gateway != cfg.listen.api {
		if p.gatewayLn, err = listenProxied("gateway", cfg.listen.gateway, trusted); err != nil {
			return err
		}
	}
	return nil
}

// listenProxied listens on addr, believing the PROXY protocol from trusted.
func listenProxied(name, addr string, trusted *proxied.Trusted) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: listen on %s: %w", name, addr, err)
	}
	return trusted.Listen(ln), nil
}

// gatewayAddr is the address the gateway listens on.
func (p *plane) gatewayAddr() string {
	if p.gatewayLn != nil {
		return p.gatewayLn.Addr().String()
	}
	return p.apiLn.Addr().String()
}

// apiURL is the URL the API answers at.
func (p *plane) apiURL() string { return "http://" + p.apiLn.Addr().String() }

// run runs the parts, and more alongside them, until ctx is done or one of
// them fails.
func (p *plane) run(ctx context.Context, more ...func(context.Context) error) error {
	if p.worker != nil {
		if err := p.worker.Start(); err != nil {
			return fmt.Errorf("start worker: %w", err)
		}
		defer p.worker.Stop()
		p.log.Info("worker started")
	}
	eg, ctx := errgroup.WithContext(ctx)
	if p.api != nil {
		eg.Go(func() error { return p.gateway.Run(ctx) })
		if p.gatewayLn == nil {
			e := newEcho(p.log)
			p.api.Register(e)
			dashboard.Register(e, dashboard.Config{Sessions: p.api, Logger: p.log})
			p.gateway.Register(e)
			srv := httpserver.New(e, p.limits)
			srv.RegisterOnShutdown(p.gateway.Drain)
			srv.RegisterOnShutdown(p.api.Drain)
			eg.Go(func() error { return serveListener(ctx, p.log, "api+gateway", p.apiLn, srv) })
		} else {
			h := p.api.Handler()
			dashboard.Register(h, dashboard.Config{Sessions: p.api, Logger: p.log})
			apiSrv := httpserver.New(h, p.limits)
			apiSrv.RegisterOnShutdown(p.api.Drain)
			eg.Go(func() error { return serveListener(ctx, p.log, "api", p.apiLn, apiSrv) })
			srv := httpserver.New(p.gateway.Handler(), p.limits)
			srv.RegisterOnShutdown(p.gateway.Drain)
			eg.Go(func() error { return serveListener(ctx, p.log, "gateway", p.gatewayLn, srv) })
		}
	}
	if p.sweeper != nil {
		eg.Go(func() error { return p.sweeper.Run(ctx) })
	}
	if p.outbox != nil {
		eg.Go(func() error { return p.outbox.Run(ctx) })
	}
	for _, f := range more {
		eg.Go(func() error { return f(ctx) })
	}
	eg.Go(func() error { <-ctx.Done(); return nil })
	return eg.Wait()
}

// Close closes what assemble opened.
func (p *plane) Close() {
	for _, ln := range []net.Listener{p.apiLn, p.gatewayLn} {
		if ln != nil {
			ln.Close()
		}
	}
	if p.registry != nil {
		p.registry.Close()
	}
	if p.temporal != nil {
		p.temporal.Close()
	}
	if p.store != nil {
		p.store.Close()
	}
}

// checkSchema refuses to serve on a database that is behind this outpost
// (`outpost migrate` brings it up). One that is ahead was migrated by a newer
// outpost, in a rolling upgrade or before a rollback: this one runs on it,
// every migration keeping the schema usable by the release before it
// (docs/production.md, "Upgrading").
func checkSchema(ctx context.Context, log *slog.Logger, s *store.Store) error {
	v, err := s.SchemaVersion(ctx)
	if err != nil {
		return fmt.Errorf("read schema version (run `outpost migrate`?): %w", err)
	}
	switch want := store.LatestSchemaVersion(); {
	case v < want:
		return fmt.Errorf("database schema is at version %d, this outpost needs %d: run `outpost migrate`", v, want)
	case v > want:
		log.Warn("the database schema is newer than this outpost's: running on it, as migrations keep the previous release working",
			"schema_version", v, "outpost_schema_version", want)
	}
	return nil
}
