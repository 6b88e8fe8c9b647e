package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/internal/envflag"
)

func runMigrate(ctx context.Context, args []string, log *slog.Logger) error {
	var c common
	fs := newFlagSet("migrate")
	c.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	s, err := c.openStore(ctx, log, true)
	if err != nil {
		return err
	}
	defer s.Close()
	v, err := s.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("database (%s) at schema version %d\n", s.Dialect(), v)
	return nil
}

func runOrg(ctx context.Context, args []string, log *slog.Logger) error {
	const usage = "usage: outpost org create NAME [flags]\n  create an org and its build runner, and print its admin user's password and first API token, once"
	if err := groupHelp(args, usage); err != nil {
		return err
	}
	if len(args) < 1 || args[0] != "create" {
		return errors.New(usage)
	}
	var c common
	fs := newFlagSet("org create")
	c.register(fs)
	if err := fs.Parse(args[1:], os.Getenv); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New(usage)
	}
	s, err := c.openStore(ctx, log, true)
	if err != nil {
		return err
	}
	defer s.Close()
	a, err := s.CreateOrgWithAdmin(ctx, fs.Arg(0))
	if err != nil {
		return err
	}
	if _, err := s.EnsureBuildRunner(ctx, a.Org.ID); err != nil {
		return err
	}
	// The password on stderr, the token alone on stdout (scripts read it).
	fmt.Fprintf(os.Stderr, "created org %s (%s); its local admin (shown once): user %q, password %s\n"+
		"its admin API token (shown once):\n", a.Org.Name, a.Org.ID, a.Admin.Name, a.Password)
	fmt.Println(a.Token)
	return nil
}

// registerServe registers the flags of a process that serves the API, the
// gateway and the registry (api, dev), gatewayURLHelp ending the
// -gateway-url help; once parsed, the function it returns completes
// cfg.serve from them.
func (cfg *planeConfig) registerServe(fs *envflag.FlagSet, gatewayURLHelp string) func() error {
	var gw gatewayFlags
	gw.register(fs)
	cfg.serve.listen.register(fs)
	cfg.serve.abuse.register(fs)
	registryListen := registryListenFlag(fs)
	gatewayURL := gatewayURLFlag(fs, "", gatewayURLHelp)
	return func() error {
		iv, err := gw.intervals()
		if err != nil {
			return err
		}
		if err := cfg.serve.abuse.check(iv); err != nil {
			return err
		}
		cfg.serve.intervals, cfg.serve.registryListen, cfg.gatewayURL = iv, *registryListen, *gatewayURL
		cfg.serve.auditRetention = gw.auditRetention
		return nil
	}
}

// runAPI serves the control API, the runner gateway and the vendor registry.
func runAPI(ctx context.Context, args []string, log *slog.Logger) error {
	cfg := planeConfig{serve: &serveConfig{}}
	fs := newFlagSet("api")
	cfg.register(fs)
	serveFlags := cfg.registerServe(fs, "; the runner's helm install command points there (default: none, and that command answers 409)")
	metricsListen := metricsListenFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := serveFlags(); err != nil {
		return err
	}
	p, err := assemble(ctx, log, cfg)
	if err != nil {
		return err
	}
	defer p.Close()
	return p.run(ctx, p.alongside(*metricsListen)...)
}

// runWorker runs the Temporal worker.
func runWorker(ctx context.Context, args []string, log *slog.Logger) error {
	cfg := planeConfig{work: &workConfig{}}
	fs := newFlagSet("worker")
	cfg.register(fs)
	gatewayURL := gatewayURLFlag(fs, "http://127.0.0.1:8081", "; terraform jobs keep their state there")
	registryURL := fs.String("registry-url", "http://127.0.0.1:5000",
		"the vendor registry's URL as runners reach it; builds push there, installs sync from there")
	fs.StringVar(&cfg.work.publicURL, "public-url", "", "the dashboard's URL as users reach it: notifications link to its pages (empty: no links)")
	healthListen := healthListenFlag(fs)
	metricsListen := metricsListenFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	var err error
	if cfg.work.registryAddress, cfg.work.registryPlainHTTP, err = parseRegistryURL(*registryURL); err != nil {
		return err
	}
	cfg.gatewayURL = *gatewayURL
	p, err := assemble(ctx, log, cfg)
	if err != nil {
		return err
	}
	defer p.Close()
	more := p.alongside(*metricsListen)
	if *healthListen != "" {
		more = append(more, p.serveHealth(*healthListen))
	}
	return p.run(ctx, more...)
}

func newEcho(log *slog.Logger) *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = apierr.Handler(log)
	e.Use(middleware.Recover())
	return e
}

// serveListener serves srv on ln until ctx is done, then shuts down
// gracefully (a gateway's long polls, the API's log follow streams and
// ?wait= requests are answered at once, their Drain being registered with
// srv.RegisterOnShutdown: clients simply go on at another replica).
func serveListener(ctx context.Context, log *slog.Logger, name string, ln net.Listener, srv *http.Server) error {
	log.Info("listening", "server", name, "addr", ln.Addr().String())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("%s: %w", name, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	return nil
}
