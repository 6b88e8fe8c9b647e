package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/outpost-dev/outpost/api/gateway"
	"github.com/outpost-dev/outpost/internal/envflag"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/seal"
	"github.com/outpost-dev/outpost/worker"
)

// Where state is kept unless -data-dir (OUTPOST_DATA_DIR) says otherwise.
const defaultDataDir = ".outpost"

// newFlagSet returns the flags of a command: each flag -x-y falls back on
// OUTPOST_X_Y (package envflag).
func newFlagSet(name string) *envflag.FlagSet {
	return envflag.New("outpost "+name, "OUTPOST_")
}

// groupHelp answers -h as the first argument of a command of subcommands
// (kek, org, runner): its usage, and flag.ErrHelp (exit 0).
func groupHelp(args []string, usage string) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprintln(os.Stderr, usage)
		return flag.ErrHelp
	}
	return nil
}

// parse parses args, each flag falling back on the environment, and refuses
// stray positional arguments.
func parse(fs *envflag.FlagSet, args []string) error {
	if err := fs.Parse(args, os.Getenv); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// common are the flags every server command shares.
type common struct {
	databaseURL string
	dataDir     string
	temporal    string
	namespace   string
	taskQueue   string
	kek         kekFlags
	// ring is the keyring openStore loaded.
	ring *seal.Keyring
}

// register adds the flags; DATABASE_URL, TEMPORAL_ADDRESS and
// TEMPORAL_NAMESPACE, the variables PostgreSQL's and Temporal's own tools
// read, are aliases of their OUTPOST_ variables.
func (c *common) register(fs *envflag.FlagSet) {
	fs.StringVar(&c.databaseURL, "database-url", "", "PostgreSQL URL; empty uses SQLite in the data directory")
	fs.Alias("database-url", "DATABASE_URL")
	fs.StringVar(&c.dataDir, "data-dir", defaultDataDir, "the state directory: SQLite, embedded Temporal, the vendor registry's blobs, dev's runners")
	fs.StringVar(&c.temporal, "temporal-address", "127.0.0.1:7233", "Temporal frontend host:port")
	fs.Alias("temporal-address", "TEMPORAL_ADDRESS")
	fs.StringVar(&c.namespace, "temporal-namespace", "default", "Temporal namespace")
	fs.Alias("temporal-namespace", "TEMPORAL_NAMESPACE")
	fs.StringVar(&c.taskQueue, "task-queue", worker.DefaultTaskQueue, "Temporal task queue of the control workflows")
	c.kek.register(fs)
}

// openStore opens the store (SQLite in the data directory without a
// database URL) with the key-encryption keys, migrates it when asked, and
// checks the keys unwrap its data keys.
func (c *common) openStore(ctx context.Context, log *slog.Logger, migrate bool) (*store.Store, error) {
	var err error
	if c.ring, err = c.kek.keyring(log, c.dataDir, c.kek.generate || c.databaseURL == ""); err != nil {
		return nil, err
	}
	cfg := store.Config{DatabaseURL: c.databaseURL, Logger: log, Keys: c.ring}
	if c.databaseURL == "" {
		if err := os.MkdirAll(c.dataDir, 0o700); err != nil {
			return nil, fmt.Errorf("create data directory: %w", err)
		}
		cfg.SQLitePath = filepath.Join(c.dataDir, "outpost.db")
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	s, err := store.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	check := s.CheckKeys
	if migrate {
		check = s.Migrate // checks the keys too
	}
	if err := check(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// gatewayFlags are the intervals the gateway hands out, and how long its sweep keeps audit events.
type gatewayFlags struct {
	claimWait, jobHeartbeat, lease, runnerHeartbeat, logBatch time.Duration
	quietHeartbeat, auditRetention                            time.Duration
}

func (g *gatewayFlags) register(fs *envflag.FlagSet) {
	d := gateway.DefaultIntervals
	fs.DurationVar(&g.claimWait, "claim-wait", d.ClaimWait(), "how long the gateway holds a runner's claim long poll")
	fs.DurationVar(&g.jobHeartbeat, "job-heartbeat", d.JobHeartbeat(), "how often runners renew a running job's lease")
	fs.DurationVar(&g.lease, "lease", d.Lease(), "how long a job lease lasts after each renewal")
	fs.DurationVar(&g.runnerHeartbeat, "runner-heartbeat", d.RunnerHeartbeat(), "how often runners report version and capabilities")
	fs.DurationVar(&g.quietHeartbeat, "quiet-heartbeat", d.QuietHeartbeat(), "the longest a runner with nothing new to report goes without a heartbeat (0: a heartbeat every -runner-heartbeat)")
	fs.DurationVar(&g.logBatch, "log-batch", d.LogBatch(), "how long runners gather a job's log lines into one request (its first and last lines go at once)")
	fs.DurationVar(&g.auditRetention, "audit-retention", store.DefaultAuditRetention, "how long audit events are kept (at least 24h)")
}

// intervals checks the gateway's flags (the intervals and -audit-retention)
// and returns the intervals it hands out to runners.
func (g *gatewayFlags) intervals() (protocol.Intervals, error) {
	iv := protocol.Intervals{ClaimWaitMS: g.claimWait.Milliseconds(), JobHeartbeatMS: g.jobHeartbeat.Milliseconds(),
		LeaseMS: g.lease.Milliseconds(), RunnerHeartbeatMS: g.runnerHeartbeat.Milliseconds(), LogBatchMS: g.logBatch.Milliseconds(),
		QuietHeartbeatMS: g.quietHeartbeat.Milliseconds()}
	switch {
	case iv.ClaimWaitMS < 1000:
		return iv, errors.New("-claim-wait must be at least 1s")
	case iv.JobHeartbeatMS < 100:
		return iv, errors.New("-job-heartbeat must be at least 100ms")
	case iv.LeaseMS < 2*iv.JobHeartbeatMS:
		return iv, errors.New("-lease must be at least twice -job-heartbeat")
	case iv.QuietHeartbeatMS != 0 && iv.QuietHeartbeatMS < iv.RunnerHeartbeatMS:
		return iv, errors.New("-quiet-heartbeat must be 0 or at least -runner-heartbeat")
	case iv.LogBatchMS < 1 || iv.LogBatchMS > iv.JobHeartbeatMS:
		return iv, errors.New("-log-batch must be at least 1ms and at most -job-heartbeat")
	case g.auditRetention < 24*time.Hour:
		return iv, fmt.Errorf("-audit-retention must be at least 24h, got %s", g.auditRetention)
	}
	return iv, nil
}

// listenFlags are the addresses of the API and the gateway.
type listenFlags struct {
	api, gateway string
}

func (l *listenFlags) register(fs *envflag.FlagSet) {
	fs.StringVar(&l.api, "api-listen", "127.0.0.1:8080", "address of the control API")
	fs.StringVar(&l.gateway, "gateway-listen", "127.0.0.1:8081",
		"address of the runner gateway, the only one runners need; the same as -api-listen serves both on one port")
}

// gatewayURLFlag adds -gateway-url, the gateway's URL as runners reach it:
// the API's runner install command points there, terraform jobs keep their
// state there.
func gatewayURLFlag(fs *envflag.FlagSet, def, more string) *string {
	return fs.String("gateway-url", def, "the gateway's URL as runners reach it"+more)
}
