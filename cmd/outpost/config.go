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
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// common are the flags every server command shares.
type common struct {
	databaseURL string
	dataDir     string
	temporal    string
	namespace   string
	taskQueue   string
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.databaseURL, "database-url", os.Getenv("DATABASE_URL"), "PostgreSQL URL; empty uses SQLite in the data directory (env DATABASE_URL)")
	fs.StringVar(&c.dataDir, "data-dir", envOr("OUTPOST_DATA_DIR", ".outpost"), "where SQLite and embedded Temporal keep state (env OUTPOST_DATA_DIR)")
	fs.StringVar(&c.temporal, "temporal-address", envOr("TEMPORAL_ADDRESS", "127.0.0.1:7233"), "Temporal frontend host:port (env TEMPORAL_ADDRESS)")
	fs.StringVar(&c.namespace, "temporal-namespace", envOr("TEMPORAL_NAMESPACE", "default"), "Temporal namespace (env TEMPORAL_NAMESPACE)")
	fs.StringVar(&c.taskQueue, "task-queue", envOr("OUTPOST_TASK_QUEUE", "outpost-control"), "Temporal task queue of the control workflows")
}

// parse parses args and refuses stray positional arguments.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// openStore opens and migrates the store.
func (c *common) openStore(ctx context.Context, log *slog.Logger, migrate bool) (*store.Store, error) {
	cfg := store.Config{DatabaseURL: c.databaseURL, Logger: log}
	if c.databaseURL == "" {
		cfg.SQLitePath = filepath.Join(c.dataDir, "outpost.db")
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	s, err := store.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if migrate {
		if err := s.Migrate(ctx); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// gatewayFlags are the intervals the gateway hands out.
type gatewayFlags struct {
	claimWait, jobHeartbeat, lease, runnerHeartbeat, logBatch time.Duration
}

func (g *gatewayFlags) register(fs *flag.FlagSet) {
	d := gateway.DefaultIntervals
	fs.DurationVar(&g.claimWait, "claim-wait", d.ClaimWait(), "how long the gateway holds a runner's claim long poll")
	fs.DurationVar(&g.jobHeartbeat, "job-heartbeat", d.JobHeartbeat(), "how often runners renew a running job's lease")
	fs.DurationVar(&g.lease, "lease", d.Lease(), "how long a job lease lasts after each renewal")
	fs.DurationVar(&g.runnerHeartbeat, "runner-heartbeat", d.RunnerHeartbeat(), "how often runners report version and capabilities")
	fs.DurationVar(&g.logBatch, "log-batch", d.LogBatch(), "how long runners gather a job's log lines into one request (its first and last lines go at once)")
}

func (g *gatewayFlags) intervals() (protocol.Intervals, error) {
	iv := protocol.Intervals{ClaimWaitMS: g.claimWait.Milliseconds(), JobHeartbeatMS: g.jobHeartbeat.Milliseconds(),
		LeaseMS: g.lease.Milliseconds(), RunnerHeartbeatMS: g.runnerHeartbeat.Milliseconds(), LogBatchMS: g.logBatch.Milliseconds()}
	switch {
	case iv.ClaimWaitMS < 1000:
		return iv, errors.New("-claim-wait must be at least 1s")
	case iv.JobHeartbeatMS < 100:
		return iv, errors.New("-job-heartbeat must be at least 100ms")
	case iv.LeaseMS < 2*iv.JobHeartbeatMS:
		return iv, errors.New("-lease must be at least twice -job-heartbeat")
	case iv.LogBatchMS < 1 || iv.LogBatchMS > iv.JobHeartbeatMS:
		return iv, errors.New("-log-batch must be at least 1ms and at most -job-heartbeat")
	}
	return iv, nil
}

// listenFlags are the addresses of the API and the gateway.
type listenFlags struct {
	api, gateway string
}

func (l *listenFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&l.api, "listen", envOr("OUTPOST_API_LISTEN", "127.0.0.1:8080"), "address of the control API (env OUTPOST_API_LISTEN)")
	fs.StringVar(&l.gateway, "gateway-listen", envOr("OUTPOST_GATEWAY_LISTEN", "127.0.0.1:8081"),
		"address of the runner gateway, the only one runners need; the same as -listen serves both on one port (env OUTPOST_GATEWAY_LISTEN)")
}
