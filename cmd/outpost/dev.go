package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/outpost-dev/outpost/activities"
	"github.com/outpost-dev/outpost/api"
	"github.com/outpost-dev/outpost/api/gateway"
	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/localcluster"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/worker"
	"github.com/outpost-dev/outpost/worker/devserver"
)

// Names of what `outpost dev` bootstraps.
const (
	devOrg     = "dev"
	devApp     = "demo"
	devInstall = "demo"
)

func runDev(ctx context.Context, args []string, log *slog.Logger) error {
	var c common
	var gw gatewayFlags
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	c.register(fs)
	gw.register(fs)
	var l listenFlags
	l.register(fs)
	var reg registryFlags
	reg.register(fs, "")
	tPort := fs.Int("temporal-port", 7233, "port of the embedded Temporal frontend")
	uiPort := fs.Int("temporal-ui-port", 8233, "port of the Temporal web UI (-1: none)")
	runnerBin := fs.String("runner-bin", "", "the outpost-runner binary (default: next to this binary, then PATH)")
	runners := fs.Bool("runners", true, "launch the demo install's runner and the org's build runner")
	example := fs.String("example", "examples/demo-app", "app config synced to the demo app and provisioned on the demo install at start (\"\" for none)")
	if err := parse(fs, args); err != nil {
		return err
	}
	iv, err := gw.intervals()
	if err != nil {
		return err
	}
	dataDir, err := filepath.Abs(c.dataDir)
	if err != nil {
		return err
	}
	c.dataDir = dataDir
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}

	// Temporal first: everything else needs it.
	ts, err := devserver.Start(ctx, devserver.Options{DataDir: filepath.Join(dataDir, "temporal"),
		FrontendPort: *tPort, UIPort: *uiPort, Namespace: c.namespace})
	if err != nil {
		return fmt.Errorf("start embedded temporal: %w", err)
	}
	defer ts.Stop()
	s, err := c.openStore(ctx, log, true)
	if err != nil {
		return err
	}
	defer s.Close()
	tc, err := worker.Dial(ctx, ts.FrontendAddress(), ts.Namespace(), log)
	if err != nil {
		return err
	}
	defer tc.Close()
	boot, err := bootstrap(ctx, s, dataDir)
	if err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	if reg.dir == "" {
		reg.dir = filepath.Join(dataDir, "registry")
	}
	rs, err := reg.start(ctx, s)
	if err != nil {
		return err
	}
	registryAddr := ""
	if rs != nil {
		defer rs.Close()
		registryAddr = rs.Addr()
	}

	// Listen before launching runners so they find the gateway.
	apiLn, err := net.Listen("tcp", l.api)
	if err != nil {
		return fmt.Errorf("api: listen on %s: %w", l.api, err)
	}
	gwLn, err := net.Listen("tcp", l.gateway)
	if err != nil {
		apiLn.Close()
		return fmt.Errorf("gateway: listen on %s: %w", l.gateway, err)
	}
	g := gateway.New(gateway.Config{Store: s, Logger: log, Intervals: iv})
	gatewayURL := "http://" + gwLn.Addr().String()
	a := api.New(api.Config{Store: s, Ops: &worker.Operations{Client: tc, TaskQueue: c.taskQueue}, Logger: log,
		GatewayURL: gatewayURL})
	w := worker.New(worker.Config{Client: tc, Store: s, TaskQueue: c.taskQueue, Logger: log,
		Operations: activities.OperationConfig{GatewayURL: gatewayURL, RegistryAddress: registryAddr, RegistryPlainHTTP: true}})
	if err := w.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	defer w.Stop()

	eg, ctx := errgroup.WithContext(ctx)
	eg.Go(func() error { return g.Run(ctx) })
	eg.Go(func() error { return serveListener(ctx, log, "api", apiLn, a.Handler()) })
	eg.Go(func() error { return serveListener(ctx, log, "gateway", gwLn, g.Handler()) })
	if *runners {
		bin, err := findRunner(*runnerBin)
		if err != nil {
			return err
		}
		for _, r := range boot.runners {
			eg.Go(func() error { return superviseRunner(ctx, log, bin, gatewayURL, r, dataDir) })
		}
	}

	apiURL := "http://" + apiLn.Addr().String()
	fmt.Printf(`
Outpost is running (embedded mode; state in %s)

  API          %s/v1        (OpenAPI: %s/v1/openapi.json)
  Gateway      %s/runner/v1
  Temporal UI  %s
  Temporal     %s (namespace %s)

  org %q   app %q (%s)   install %q (%s)
  export OUTPOST_TOKEN=%s
  export OUTPOST_API=%s
  export APP=%s
  export INSTALL=%s

Try:  curl -s -H "Authorization: Bearer $OUTPOST_TOKEN" $OUTPOST_API/v1/runners

`, dataDir, apiURL, apiURL, gatewayURL, orNone(ts.UIURL()), ts.FrontendAddress(), ts.Namespace(),
		devOrg, devApp, boot.appID, devInstall, boot.installID, boot.token, apiURL, boot.appID, boot.installID)
	if *example != "" {
		eg.Go(func() error {
			if err := provisionExample(ctx, log, apiURL, boot, *example); err != nil {
				log.Warn("dev: the example app was not provisioned", "err", err)
			}
			return nil
		})
	}
	return eg.Wait()
}

// provisionExample syncs the example app config to the demo app through the
// API, as a user would, and provisions the demo install if it never was.
func provisionExample(ctx context.Context, log *slog.Logger, apiURL string, b bootResult, dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "outpost.toml")); err != nil {
		return fmt.Errorf("no app config at %s (run from the repository's root, or pass -example): %w", dir, err)
	}
	archive, err := appconfig.ArchiveDir(os.DirFS(dir), ".")
	if err != nil {
		return err
	}
	call := func(method, path, contentType string, body []byte, out any) (int, error) {
		req, err := http.NewRequestWithContext(ctx, method, apiURL+path, bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Authorization", "Bearer "+b.token)
		req.Header.Set("Content-Type", contentType)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 300 {
			return resp.StatusCode, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, raw)
		}
		if out != nil {
			return resp.StatusCode, json.Unmarshal(raw, out)
		}
		return resp.StatusCode, nil
	}
	var cfg struct {
		Version int `json:"version"`
	}
	if _, err := call("POST", "/v1/apps/"+b.appID+"/configs", "application/gzip", archive, &cfg); err != nil {
		return err
	}
	var inst struct {
		Status string `json:"status"`
	}
	if _, err := call("GET", "/v1/installs/"+b.installID, "application/json", nil, &inst); err != nil {
		return err
	}
	if inst.Status != store.InstallCreated {
		log.Info("dev: example app synced; the demo install was provisioned before", "config_version", cfg.Version, "install_status", inst.Status)
		return nil
	}
	var op struct {
		ID         string `json:"id"`
		WorkflowID string `json:"workflow_id"`
	}
	if _, err := call("POST", "/v1/installs/"+b.installID+"/provision", "application/json", []byte("{}"), &op); err != nil {
		return err
	}
	log.Info("dev: provisioning the demo install", "operation", op.ID, "workflow", op.WorkflowID, "config_version", cfg.Version)
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(disabled)"
	}
	return s
}

// devRunner is a runner `outpost dev` launches, with a fresh token.
type devRunner struct {
	name  string
	token string
}

type bootResult struct {
	token     string
	appID     string
	installID string
	runners   []devRunner
}

// bootstrap creates (once) the dev org, its admin token, the demo app and
// install, and issues fresh runner tokens for this run. The admin token is
// kept in the data directory (mode 0600) so it stays the same across restarts.
func bootstrap(ctx context.Context, s *store.Store, dataDir string) (bootResult, error) {
	var b bootResult
	tokenFile := filepath.Join(dataDir, "admin-token")
	org, err := s.GetOrgByName(ctx, devOrg)
	switch {
	case errors.Is(err, store.ErrNotFound):
		org, b.token, err = s.CreateOrg(ctx, devOrg)
		if err != nil {
			return b, err
		}
		if err := os.WriteFile(tokenFile, []byte(b.token+"\n"), 0o600); err != nil {
			return b, err
		}
	case err != nil:
		return b, err
	default:
		raw, rerr := os.ReadFile(tokenFile)
		b.token = strings.TrimSpace(string(raw))
		if _, aerr := s.AuthenticateAPIToken(ctx, b.token); rerr != nil || aerr != nil {
			// Lost or revoked: issue a new one.
			_, b.token, err = s.CreateAPIToken(ctx, org.ID, fmt.Sprintf("dev-%d", time.Now().Unix()))
			if err != nil {
				return b, err
			}
			if err := os.WriteFile(tokenFile, []byte(b.token+"\n"), 0o600); err != nil {
				return b, err
			}
		}
	}
	build, err := s.EnsureBuildRunner(ctx, org.ID)
	if err != nil {
		return b, err
	}
	apps, err := s.ListApps(ctx, org.ID)
	if err != nil {
		return b, err
	}
	for _, app := range apps {
		if app.Name == devApp {
			b.appID = app.ID
		}
	}
	if b.appID == "" {
		app, err := s.CreateApp(ctx, org.ID, devApp, "the demo app of `outpost dev`")
		if err != nil {
			return b, err
		}
		b.appID = app.ID
	}
	installs, err := s.ListInstalls(ctx, org.ID, b.appID)
	if err != nil {
		return b, err
	}
	for _, in := range installs {
		if in.Name == devInstall {
			b.installID = in.ID
		}
	}
	if b.installID == "" {
		// The example app's one required input, a secret.
		in, _, _, err := s.CreateInstall(ctx, org.ID, b.appID, devInstall,
			[]store.InstallInput{{Name: "db_password", Value: store.NewID("pw"), Sensitive: true}})
		if err != nil {
			return b, err
		}
		b.installID = in.ID
	}
	ir, err := s.GetInstallRunner(ctx, org.ID, b.installID)
	if err != nil {
		return b, err
	}
	for _, r := range []struct {
		name string
		id   string
	}{{"install-" + devInstall, ir.ID}, {"build", build.ID}} {
		tok, err := s.IssueRunnerToken(ctx, org.ID, r.id)
		if err != nil {
			return b, err
		}
		b.runners = append(b.runners, devRunner{name: r.name, token: tok})
	}
	return b, nil
}

// findRunner locates the outpost-runner binary.
func findRunner(flagValue string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), "outpost-runner")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	p, err := exec.LookPath("outpost-runner")
	if err != nil {
		return "", errors.New("outpost-runner not found next to outpost or on PATH: build it (`go tool task build`) or pass -runner-bin")
	}
	return p, nil
}

// superviseRunner runs one outpost-runner process as a separate process
// (its token passed in the environment, never on the command line) and
// restarts it if it dies, until ctx is done.
func superviseRunner(ctx context.Context, log *slog.Logger, bin, gatewayURL string, r devRunner, dataDir string) error {
	workDir := filepath.Join(dataDir, "runners", r.name)
	logPath := filepath.Join(dataDir, "runners", r.name+".log")
	if err := os.MkdirAll(workDir, 0o700); err != nil {
		return err
	}
	for ctx.Err() == nil {
		out, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		cmd := exec.Command(bin, "run", "--gateway", gatewayURL, "--work-dir", workDir, "--name", r.name)
		// The local stand-ins the example sandbox starts (outpost-registry)
		// are next to the runner.
		cmd.Env = append(os.Environ(), "OUTPOST_TOKEN="+r.token,
			"PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
		if assets, err := localcluster.FindAssets("", "."); err == nil {
			// The example sandbox's cluster (outpost-cluster) finds etcd
			// and kube-apiserver there.
			cmd.Env = append(cmd.Env, localcluster.EnvAssets+"="+assets)
		} else {
			log.Warn("no etcd/kube-apiserver: a sandbox that starts a local cluster will fail (bash scripts/tools.sh builds them)", "err", err)
		}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			out.Close()
			return fmt.Errorf("start runner %s: %w", r.name, err)
		}
		log.Info("runner started", "runner", r.name, "pid", cmd.Process.Pid, "log", logPath)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			log.Warn("runner exited; restarting in 2s", "runner", r.name, "err", err)
			out.Close()
			select {
			case <-ctx.Done():
			case <-time.After(2 * time.Second):
			}
		case <-ctx.Done():
			cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				cmd.Process.Kill()
				<-done
			}
			out.Close()
		}
	}
	return nil
}
