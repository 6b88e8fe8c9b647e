package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/outpost-dev/outpost/internal/cliconfig"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/worker/devserver"
)

// Names of what `outpost dev` bootstraps.
const (
	devOrg     = "dev"
	devApp     = "demo"
	devInstall = "demo"
)

func runDev(ctx context.Context, args []string, log *slog.Logger) error {
	cfg := planeConfig{migrate: true, ownGateway: true, serve: &serveConfig{}, work: &workConfig{}}
	cfg.kek.generate = true // in the data directory, with SQLite or PostgreSQL
	fs := newFlagSet("dev")
	cfg.register(fs)
	serveFlags := cfg.registerServe(fs, " (default: this process's gateway)")
	var tf temporalFlags
	tf.register(fs)
	runnerBin := fs.String("runner-bin", "", "the outpost-runner binary (default: next to this binary, then PATH)")
	metricsListen := metricsListenFlag(fs)
	runners := fs.Bool("runners", true, "launch the demo install's runner and the org's build runner")
	example := fs.String("example", "examples/demo-app", "app config synced to the demo app and provisioned on the demo install at start: a directory, or several separated by commas, each laid over the ones before (examples/demo-app,examples/build-app) (\"\" for none)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := serveFlags(); err != nil {
		return err
	}
	var err error
	if cfg.dataDir, err = filepath.Abs(cfg.dataDir); err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.dataDir, 0o700); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}

	// Temporal first: everything else needs it.
	ts, err := devserver.Start(ctx, devserver.Options{DataDir: temporalDir(cfg.dataDir),
		FrontendPort: tf.port, UIPort: tf.uiPort, UIWriteActions: tf.uiWrite, Namespace: cfg.namespace})
	if err != nil {
		return fmt.Errorf("start embedded temporal: %w", err)
	}
	defer ts.Stop()
	cfg.temporal, cfg.namespace = ts.FrontendAddress(), ts.Namespace()
	p, err := assemble(ctx, log, cfg)
	if err != nil {
		return err
	}
	defer p.Close()
	boot, err := bootstrap(ctx, p.store, cfg.dataDir)
	if err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}

	kube := newKubeTools(cfg.dataDir)
	more := p.alongside(*metricsListen)
	if *runners {
		bin, err := findRunner(*runnerBin)
		if err != nil {
			return err
		}
		for _, r := range boot.runners {
			more = append(more, func(ctx context.Context) error {
				return superviseRunner(ctx, log, bin, p.gatewayURL, r, cfg.dataDir, kube)
			})
		}
	}
	if kube.building() {
		// Progress only: the demo's cluster step waits for the binaries.
		more = append(more, func(ctx context.Context) error {
			if err := kube.wait(ctx); err != nil && ctx.Err() == nil {
				log.Warn("dev: no etcd/kube-apiserver: the demo's cluster and web steps fail", "err", err)
			}
			return nil
		})
	}
	apiURL := p.apiURL()
	cliContext := writeCLIContext(log, apiURL, cfg.dataDir)
	fmt.Printf(`
Outpost is running (embedded mode; state in %s)

  API          %s/v1        (OpenAPI: %s/v1/openapi.json)
  Dashboard    %s/ui/       (sign in: org %q, user %q, password %s)
  Gateway      %s/runner/v1
  Temporal UI  %s
  Temporal     %s (namespace %s)
  Secrets      sealed at rest with the key-encryption key in %s

  org %q   app %q (%s)   install %q (%s)
  export OUTPOST_TOKEN=%s
  export OUTPOST_API=%s
  export APP=%s
  export INSTALL=%s

Try:  curl -s -H "Authorization: Bearer $OUTPOST_TOKEN" $OUTPOST_API/v1/runners
%s
`, cfg.dataDir, apiURL, apiURL, apiURL, devOrg, store.LocalAdminName, devPassword(boot, cfg.dataDir), p.gatewayURL, orNone(ts.UIURL()), ts.FrontendAddress(), ts.Namespace(),
		cfg.kek.where(cfg.dataDir), devOrg, devApp, boot.appID, devInstall, boot.installID, boot.token, apiURL, boot.appID, boot.installID, cliContext)
	if *example != "" {
		more = append(more, func(ctx context.Context) error {
			if err := provisionExample(ctx, log, apiURL, boot, *example); err != nil {
				log.Warn("dev: the example app was not provisioned", "err", err)
			}
			return nil
		})
	}
	return p.run(ctx, more...)
}

// writeCLIContext makes the CLI's context "dev" (its token: the admin token
// file) the current one, and is the banner's line about it.
func writeCLIContext(log *slog.Logger, apiURL, dataDir string) string {
	path, err := cliconfig.Path()
	if err == nil {
		err = cliconfig.Write(path, cliconfig.Context{Name: devOrg, API: apiURL, TokenFile: filepath.Join(dataDir, adminTokenFile)}, true)
	}
	if err != nil {
		log.Warn("dev: the CLI's context was not written", "err", err)
		return ""
	}
	return fmt.Sprintf("      outpostctl installs list   (context %q, current, in %s)\n", devOrg, path)
}

func orNone(s string) string {
	if s == "" {
		return "(disabled)"
	}
	return s
}

// devPassword is how outpost dev shows the admin's password: itself the run
// that made it, else where it is kept.
func devPassword(b bootResult, dataDir string) string {
	if b.password != "" {
		return b.password + " (shown once; also in " + filepath.Join(dataDir, adminPasswordFile) + ")"
	}
	return "in " + filepath.Join(dataDir, adminPasswordFile)
}
