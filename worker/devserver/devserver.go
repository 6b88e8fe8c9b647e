package devserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/outpost-dev/outpost/internal/ctxsleep"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uioptions "github.com/temporalio/ui-server/v2/server/server_options"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/membership/static"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"
)

const (
	// DBFileName is the SQLite file created inside Options.DataDir.
	DBFileName = "temporal.sqlite"

	defaultIP        = "127.0.0.1"
	defaultNamespace = "default"
	clusterName      = "active"
	storeName        = "sqlite-default"

	// readyTimeout bounds how long Start waits for the frontend, namespace
	// and UI to answer when ctx has no earlier deadline.
	readyTimeout = 60 * time.Second
	// uiStopTimeout bounds how long Stop waits for the UI goroutine.
	uiStopTimeout = 5 * time.Second
	pollInterval  = 50 * time.Millisecond
)

// Options configures Start. The zero value runs an in-memory server with the
// web UI, on 127.0.0.1, on free ports, with the "default" namespace.
type Options struct {
	// DataDir holds the server state in DataDir/temporal.sqlite (directory
	// and file are created if missing; the schema is set up on first use
	// only). "" keeps all state in memory for the life of the Server.
	DataDir string
	// IP the frontend gRPC and UI HTTP servers listen on. Default
	// "127.0.0.1". The internal history/matching/worker services always
	// listen on 127.0.0.1.
	IP string
	// FrontendPort is the gRPC port clients and workers dial; 0 picks a free
	// port.
	FrontendPort int
	// UIPort is the web UI's HTTP port; 0 picks a free port, -1 disables the
	// UI (headless).
	UIPort int
	// UIWriteActions lets the web UI signal, cancel, terminate and reset
	// workflows; off, its API refuses every such request (405): approving
	// a plan is the API's alone.
	UIWriteActions bool
	// Namespace is registered if missing (persisted in DataDir, so kept
	// across restarts). Default "default".
	Namespace string
	// LogLevel is the minimum level of the Temporal server's own log
	// records: debug, info, warn or error. Default "warn".
	LogLevel string
	// Logger receives the Temporal server's log records (filtered at
	// LogLevel). nil writes text logs to stderr.
	Logger *slog.Logger
}

// Server is a running in-process Temporal server (and optional web UI).
// Its methods are safe for concurrent use.
type Server struct {
	frontendAddr string
	namespace    string
	uiURL        string

	temporal temporal.Server
	ui       *uiserver.Server
	uiDone   chan struct{}
	// quiet demotes the server's logs to debug once Stop begins.
	quiet atomic.Bool

	stopOnce sync.Once
	stopErr  error
}

// FrontendAddress is the host:port of the frontend gRPC endpoint, e.g.
// "127.0.0.1:7233", suitable for client.Options.HostPort.
func (s *Server) FrontendAddress() string { return s.frontendAddr }

// Namespace is the namespace that Start registered.
func (s *Server) Namespace() string { return s.namespace }

// UIURL is the web UI's base URL, e.g. "http://127.0.0.1:8233", or "" when
// the server is headless (Options.UIPort == -1).
func (s *Server) UIURL() string { return s.uiURL }

// Stop shuts down the web UI and the Temporal server. It is safe to call more
// than once (and concurrently); later calls return the first call's result.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() { s.stopErr = s.stop() })
	return s.stopErr
}

func (s *Server) stop() error {
	s.quiet.Store(true)
	var errs []error
	if s.ui != nil {
		s.ui.Stop()
		select {
		case <-s.uiDone:
		case <-time.After(uiStopTimeout):
			errs = append(errs, errors.New("devserver: web UI did not stop in time"))
		}
	}
	if s.temporal != nil {
		if err := s.temporal.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("devserver: stopping temporal server: %w", err))
		}
	}
	return errors.Join(errs...)
}

// Start launches a Temporal server in this process and returns once the
// frontend accepts gRPC calls, the namespace can be described and (unless
// headless) the web UI answers HTTP. On error nothing is left running.
//
// ctx bounds the start-up only; it does not stop the server later.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("devserver: %w", err)
	}
	level, err := parseLevel(opts.LogLevel)
	if err != nil {
		return nil, err
	}
	if opts.IP == "" {
		opts.IP = defaultIP
	}
	if net.ParseIP(opts.IP) == nil {
		return nil, fmt.Errorf("devserver: invalid IP %q", opts.IP)
	}
	if opts.Namespace == "" {
		opts.Namespace = defaultNamespace
	}
	if opts.FrontendPort < 0 || opts.FrontendPort > 65535 {
		return nil, fmt.Errorf("devserver: invalid FrontendPort %d", opts.FrontendPort)
	}
	if opts.UIPort < -1 || opts.UIPort > 65535 {
		return nil, fmt.Errorf("devserver: invalid UIPort %d (0 = free port, -1 = no UI)", opts.UIPort)
	}
	logger := newSlog(opts.Logger, level)

	p, uiListener, err := allocatePorts(opts)
	if err != nil {
		return nil, err
	}
	defer func() {
		if uiListener != nil { // not handed over to the UI
			_ = uiListener.Close()
		}
	}()
	// Clients dial this; a wildcard bind address is not dialable everywhere.
	dialHost := opts.IP
	if ip := net.ParseIP(opts.IP); ip.IsUnspecified() {
		dialHost = defaultIP
	}
	frontendAddr := net.JoinHostPort(dialHost, strconv.Itoa(p.frontend))

	sqlConf, err := prepareDatabase(opts.DataDir, opts.Namespace)
	if err != nil {
		return nil, err
	}

	s := &Server{frontendAddr: frontendAddr, namespace: opts.Namespace}
	conf := serverConfig(opts.IP, frontendAddr, p, sqlConf)
	hostPort := func(port int) string { return net.JoinHostPort(defaultIP, strconv.Itoa(port)) }
	srv, err := temporal.NewServer(
		temporal.WithConfig(conf),
		temporal.ForServices(temporal.DefaultServices),
		// Static membership: no ringpop gossip, no membership ports.
		temporal.WithStaticHosts(map[primitives.ServiceName]static.Hosts{
			primitives.FrontendService: static.SingleLocalHost(frontendAddr),
			primitives.HistoryService:  static.SingleLocalHost(hostPort(p.history)),
			primitives.MatchingService: static.SingleLocalHost(hostPort(p.matching)),
			primitives.WorkerService:   static.SingleLocalHost(hostPort(p.worker)),
		}),
		temporal.WithLogger(serverLogger{sl: logger, quiet: &s.quiet}),
		temporal.WithDynamicConfigClient(dynamicconfig.StaticClient{
			// Same tweaks as the Temporal CLI's start-dev.
			dynamicconfig.HistoryCacheHostLevelMaxSize.Key():                 8096,
			dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 100,
			// No periodic "is there a newer server?" call to temporal.io
			// (on by default unless TEMPORAL_VERSION_CHECK_DISABLED is set).
			dynamicconfig.EnableServerVersionCheck.Key(): false,
		}),
	)
	if err != nil {
		_ = s.Stop()
		return nil, fmt.Errorf("devserver: creating temporal server: %w", err)
	}
	s.temporal = srv
	if err := srv.Start(); err != nil {
		_ = s.Stop()
		return nil, fmt.Errorf("devserver: starting temporal server: %w", err)
	}

	readyCtx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	if err := s.waitFrontend(readyCtx, logger); err != nil {
		_ = s.Stop()
		return nil, err
	}

	// The UI starts only now: ui-server dials the frontend at construction,
	// and a refused first dial would leave its API answering 503 until
	// gRPC's reconnect backoff (1s+) expires.
	if opts.UIPort != -1 {
		s.startUI(opts.IP, dialHost, opts.UIWriteActions, uiListener, logger)
		uiListener = nil
		if err := s.waitUI(readyCtx); err != nil {
			_ = s.Stop()
			return nil, err
		}
	}
	return s, nil
}

type ports struct {
	frontend, history, matching, worker, ui int
}

// allocatePorts picks free ports for those left at 0 and checks that requested ones can be
// bound. The UI's probe listener is returned open, to be closed just before the UI binds:
// ui-server exits the process on a bind error (echo's Logger.Fatal).
func allocatePorts(opts Options) (p ports, uiListener net.Listener, err error) {
	if p.frontend, err = pickPort(opts.IP, opts.FrontendPort); err != nil {
		return p, nil, fmt.Errorf("devserver: frontend port: %w", err)
	}
	for _, port := range []*int{&p.history, &p.matching, &p.worker} {
		if *port, err = pickPort(defaultIP, 0); err != nil {
			return p, nil, fmt.Errorf("devserver: internal service port: %w", err)
		}
	}
	if opts.UIPort != -1 {
		uiListener, err = net.Listen("tcp", net.JoinHostPort(opts.IP, strconv.Itoa(opts.UIPort)))
		if err != nil {
			return p, nil, fmt.Errorf("devserver: UI port: %w", err)
		}
		p.ui = uiListener.Addr().(*net.TCPAddr).Port
	}
	return p, uiListener, nil
}

// pickPort returns port if it can be listened on (or, for 0, a port the
// kernel just handed out), after closing the probe listener.
func pickPort(ip string, port int) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
	if err != nil {
		return 0, err
	}
	got := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, err
	}
	return got, nil
}

var memDBCounter atomic.Int64

// prepareDatabase returns the SQLite persistence config, creating the schema
// on first use of a DataDir and registering namespace if missing.
func prepareDatabase(dataDir, namespace string) (*config.SQL, error) {
	conf := &config.SQL{PluginName: sqliteplugin.PluginName}
	if dataDir == "" {
		// The plugin creates the schema itself for in-memory databases. The
		// name must be unique per Start: the plugin's process-global
		// connection pool keeps every database it has opened alive.
		conf.ConnectAttributes = map[string]string{"mode": "memory", "cache": "shared"}
		conf.DatabaseName = fmt.Sprintf("outpost-devserver-%d-%d", os.Getpid(), memDBCounter.Add(1))
	} else {
		if err := os.MkdirAll(dataDir, 0o755); err != nil {
			return nil, fmt.Errorf("devserver: creating data dir: %w", err)
		}
		abs, err := filepath.Abs(filepath.Join(dataDir, DBFileName))
		if err != nil {
			return nil, fmt.Errorf("devserver: data dir: %w", err)
		}
		conf.ConnectAttributes = map[string]string{"mode": "rwc"}
		conf.DatabaseName = abs
		if _, err := os.Stat(abs); errors.Is(err, os.ErrNotExist) {
			if err := createSchema(abs); err != nil {
				return nil, err
			}
		} else if err != nil {
			return nil, fmt.Errorf("devserver: database file: %w", err)
		}
	}

	ns, err := sqliteschema.NewNamespaceConfig(clusterName, namespace, false, nil)
	if err != nil {
		return nil, fmt.Errorf("devserver: namespace %q: %w", namespace, err)
	}
	if err := sqliteschema.CreateNamespaces(conf, ns); err != nil {
		return nil, fmt.Errorf("devserver: registering namespace %q: %w", namespace, err)
	}
	return conf, nil
}

func serverConfig(bindIP, frontendAddr string, p ports, sqlConf *config.SQL) *config.Config {
	var conf config.Config
	conf.Global.Membership.MaxJoinDuration = 30 * time.Second
	conf.Global.Membership.BroadcastAddress = defaultIP
	// Global.Metrics stays nil (no-op metrics, no Prometheus listener) and
	// Global.PProf.Port 0 (no pprof listener).

	conf.Persistence.DefaultStore = storeName
	conf.Persistence.VisibilityStore = storeName
	conf.Persistence.NumHistoryShards = 1
	conf.Persistence.DataStores = map[string]config.DataStore{storeName: {SQL: sqlConf}}

	conf.ClusterMetadata = &cluster.Config{
		EnableGlobalNamespace:    false,
		FailoverVersionIncrement: 10,
		MasterClusterName:        clusterName,
		CurrentClusterName:       clusterName,
		ClusterInformation: map[string]cluster.ClusterInformation{
			clusterName: {
				Enabled:                true,
				InitialFailoverVersion: 1,
				// Updated in the database when the port changes on restart.
				RPCAddress: frontendAddr,
			},
		},
	}
	conf.DCRedirectionPolicy.Policy = "noop"

	internal := func(port int) config.Service {
		return config.Service{RPC: config.RPC{GRPCPort: port, BindOnIP: defaultIP}}
	}
	conf.Services = map[string]config.Service{
		// HTTPPort 0: no frontend HTTP API; the UI talks gRPC.
		"frontend": {RPC: config.RPC{GRPCPort: p.frontend, BindOnIP: bindIP}},
		"history":  internal(p.history),
		"matching": internal(p.matching),
		"worker":   internal(p.worker),
	}

	conf.Archival.History.State = "disabled"
	conf.Archival.Visibility.State = "disabled"
	conf.NamespaceDefaults.Archival.History.State = "disabled"
	conf.NamespaceDefaults.Archival.Visibility.State = "disabled"
	// The server's internal worker service dials the frontend here.
	conf.PublicClient.HostPort = frontendAddr
	return &conf
}

// startUI runs the web UI in a goroutine on the port that probe holds;
// waitUI checks that it came up.
func (s *Server) startUI(bindIP, dialHost string, writable bool, probe net.Listener, logger *slog.Logger) {
	port := probe.Addr().(*net.TCPAddr).Port
	s.uiURL = "http://" + net.JoinHostPort(dialHost, strconv.Itoa(port))
	s.ui = newUIServer(bindIP, port, s.frontendAddr, s.namespace, writable)
	s.uiDone = make(chan struct{})
	_ = probe.Close() // ui-server insists on binding the port itself
	go func() {
		defer close(s.uiDone)
		// Start blocks until Stop and returns nil on a clean close.
		if err := s.ui.Start(); err != nil {
			logger.Error("devserver: web UI stopped", "error", err)
		}
	}()
}

func newUIServer(bindIP string, port int, frontendAddr, namespace string, writable bool) *uiserver.Server {
	host := bindIP
	if ip := net.ParseIP(bindIP); ip != nil && ip.To4() == nil {
		host = "[" + bindIP + "]" // ui-server formats "%s:%d"
	}
	return uiserver.NewServer(uioptions.WithConfigProvider(&uiconfig.Config{
		Host:                host,
		Port:                port,
		TemporalGRPCAddress: frontendAddr,
		EnableUI:            true,
		DefaultNamespace:    namespace,
		CORS:                uiconfig.CORS{CookieInsecure: true}, // plain http on localhost
		HideLogs:            true,
		DisableNewsFetch:    true,
		DisableWriteActions: !writable,
	}))
}

// waitFrontend polls until the frontend answers DescribeNamespace for our
// namespace.
func (s *Server) waitFrontend(ctx context.Context, logger *slog.Logger) error {
	var c client.Client
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	for {
		var err error
		if c == nil {
			c, err = client.DialContext(ctx, client.Options{
				HostPort:  s.frontendAddr,
				Namespace: s.namespace,
				Logger:    sdklog.NewStructuredLogger(logger),
			})
			if err != nil {
				c = nil
			}
		}
		if c != nil {
			_, err = c.WorkflowService().DescribeNamespace(ctx,
				&workflowservice.DescribeNamespaceRequest{Namespace: s.namespace})
			if err == nil {
				return nil
			}
		}
		if werr := ctxsleep.Sleep(ctx, pollInterval); werr != nil {
			return fmt.Errorf("devserver: frontend %s not ready: %w (last error: %w)", s.frontendAddr, werr, err)
		}
	}
}

// waitUI polls until the web UI answers its health check.
func (s *Server) waitUI(ctx context.Context) error {
	hc := &http.Client{Timeout: 2 * time.Second}
	for {
		err := getOK(ctx, hc, s.uiURL+"/healthz")
		if err == nil {
			return nil
		}
		select {
		case <-s.uiDone:
			return fmt.Errorf("devserver: web UI exited during start-up: %w", err)
		default:
		}
		if werr := ctxsleep.Sleep(ctx, pollInterval); werr != nil {
			return fmt.Errorf("devserver: web UI %s not ready: %w (last error: %w)", s.uiURL, werr, err)
		}
	}
}

func getOK(ctx context.Context, hc *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}
