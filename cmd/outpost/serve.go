package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"go.temporal.io/sdk/client"
	"golang.org/x/sync/errgroup"

	"github.com/outpost-dev/outpost/activities"
	"github.com/outpost-dev/outpost/api"
	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/gateway"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/worker"
)

func runMigrate(ctx context.Context, args []string, log *slog.Logger) error {
	var c common
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
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
	if len(args) < 1 || args[0] != "create" {
		return errors.New("usage: outpost org create [flags] NAME")
	}
	var c common
	fs := flag.NewFlagSet("org create", flag.ContinueOnError)
	c.register(fs)
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: outpost org create [flags] NAME")
	}
	s, err := c.openStore(ctx, log, true)
	if err != nil {
		return err
	}
	defer s.Close()
	org, tok, err := s.CreateOrg(ctx, fs.Arg(0))
	if err != nil {
		return err
	}
	if _, err := s.EnsureBuildRunner(ctx, org.ID); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "created org %s (%s); its admin API token (shown once):\n", org.Name, org.ID)
	fmt.Println(tok)
	return nil
}

// checkSchema refuses to serve on a database that is not migrated.
func checkSchema(ctx context.Context, s *store.Store) error {
	v, err := s.SchemaVersion(ctx)
	if err != nil {
		return fmt.Errorf("read schema version (run `outpost migrate`?): %w", err)
	}
	if want := store.LatestSchemaVersion(); v != want {
		return fmt.Errorf("database schema is at version %d, this outpost needs %d: run `outpost migrate`", v, want)
	}
	return nil
}

func runAPI(ctx context.Context, args []string, log *slog.Logger) error {
	var c common
	var gw gatewayFlags
	fs := flag.NewFlagSet("api", flag.ContinueOnError)
	c.register(fs)
	gw.register(fs)
	var l listenFlags
	l.register(fs)
	var reg registryFlags
	reg.register(fs, ".data/registry")
	publicGatewayURL := fs.String("public-gateway-url", envOr("OUTPOST_PUBLIC_GATEWAY_URL", ""),
		"the gateway's public URL as runners in customers' clusters reach it; the runner's helm install command points there (env OUTPOST_PUBLIC_GATEWAY_URL)")
	if err := parse(fs, args); err != nil {
		return err
	}
	iv, err := gw.intervals()
	if err != nil {
		return err
	}
	s, tc, err := c.connect(ctx, log)
	if err != nil {
		return err
	}
	defer s.Close()
	defer tc.Close()
	if rs, err := reg.start(ctx, s); err != nil {
		return err
	} else if rs != nil {
		defer rs.Close()
		log.Info("listening", "server", "vendor registry", "addr", rs.Addr(), "dir", reg.dir)
	}
	g := gateway.New(gateway.Config{Store: s, Logger: log, Intervals: iv})
	a := api.New(api.Config{Store: s, Ops: &worker.Operations{Client: tc, TaskQueue: c.taskQueue}, Logger: log,
		GatewayURL: *publicGatewayURL})
	return serve(ctx, log, g, a, l.api, l.gateway)
}

// connect opens a migrated store and dials Temporal, for the long-running
// commands (`api`, `worker`), which refuse a database that is behind.
func (c *common) connect(ctx context.Context, log *slog.Logger) (*store.Store, client.Client, error) {
	s, err := c.openStore(ctx, log, false)
	if err != nil {
		return nil, nil, err
	}
	if err := checkSchema(ctx, s); err != nil {
		s.Close()
		return nil, nil, err
	}
	tc, err := worker.Dial(ctx, c.temporal, c.namespace, log)
	if err != nil {
		s.Close()
		return nil, nil, err
	}
	return s, tc, nil
}

// serve runs the API and gateway until ctx is done: on one listener when the
// addresses are equal, else on two.
func serve(ctx context.Context, log *slog.Logger, g *gateway.Gateway, a *api.Server, listen, gwListen string) error {
	eg, ctx := errgroup.WithContext(ctx)
	eg.Go(func() error { return g.Run(ctx) })
	if gwListen == "" || gwListen == listen {
		e := newEcho(log)
		a.Register(e)
		g.Register(e)
		eg.Go(func() error { return serveHTTP(ctx, log, "api+gateway", listen, e) })
	} else {
		eg.Go(func() error { return serveHTTP(ctx, log, "api", listen, a.Handler()) })
		eg.Go(func() error { return serveHTTP(ctx, log, "gateway", gwListen, g.Handler()) })
	}
	return eg.Wait()
}

func newEcho(log *slog.Logger) *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = apierr.Handler(log)
	e.Use(middleware.Recover())
	return e
}

// serveHTTP listens on addr and serves h until ctx is done, then shuts down
// gracefully (long polls are cut: runners simply poll again).
func serveHTTP(ctx context.Context, log *slog.Logger, name, addr string, h http.Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%s: listen on %s: %w", name, addr, err)
	}
	return serveListener(ctx, log, name, ln, h)
}

func serveListener(ctx context.Context, log *slog.Logger, name string, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
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

func runWorker(ctx context.Context, args []string, log *slog.Logger) error {
	var c common
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	c.register(fs)
	gatewayURL := fs.String("gateway-url", envOr("OUTPOST_GATEWAY_URL", "http://127.0.0.1:8081"),
		"the gateway's URL as runners reach it; terraform jobs keep their state there (env OUTPOST_GATEWAY_URL)")
	registryURL := fs.String("registry-url", envOr("OUTPOST_REGISTRY_URL", "http://127.0.0.1:5000"),
		"the vendor registry's URL as runners reach it; builds push there, installs sync from there (env OUTPOST_REGISTRY_URL)")
	if err := parse(fs, args); err != nil {
		return err
	}
	regAddr, regPlain, err := parseRegistryURL(*registryURL)
	if err != nil {
		return err
	}
	s, tc, err := c.connect(ctx, log)
	if err != nil {
		return err
	}
	defer s.Close()
	defer tc.Close()
	w := worker.New(worker.Config{Client: tc, Store: s, TaskQueue: c.taskQueue, Logger: log,
		Operations: activities.OperationConfig{GatewayURL: *gatewayURL, RegistryAddress: regAddr, RegistryPlainHTTP: regPlain}})
	if err := w.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	log.Info("worker started", "task_queue", c.taskQueue, "temporal", c.temporal)
	<-ctx.Done()
	w.Stop()
	return nil
}
