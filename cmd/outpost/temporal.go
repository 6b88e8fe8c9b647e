package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/outpost-dev/outpost/internal/envflag"
	"github.com/outpost-dev/outpost/worker/devserver"
)

// temporalFlags are the ports of a Temporal server this binary runs
// (`dev`'s embedded one, `temporal`'s).
type temporalFlags struct {
	port, uiPort int
	uiWrite      bool
}

func (t *temporalFlags) register(fs *envflag.FlagSet) {
	fs.IntVar(&t.port, "temporal-port", 7233, "port of the Temporal frontend (gRPC)")
	fs.IntVar(&t.uiPort, "temporal-ui-port", 8233, "port of the Temporal web UI (-1: none)")
	fs.BoolVar(&t.uiWrite, "temporal-ui-write-actions", false,
		"let the Temporal web UI signal, cancel, terminate and reset workflows (default: read-only)")
}

// temporalDir is where a Temporal server keeps its SQLite file.
func temporalDir(dataDir string) string { return filepath.Join(dataDir, "temporal") }

// runTemporal runs a Temporal server (and its UI) on its own, for `outpost
// api` and `outpost worker` processes that share it: the server `dev`
// embeds, its state in a SQLite file under the data directory.
func runTemporal(ctx context.Context, args []string, log *slog.Logger) error {
	var tf temporalFlags
	fs := newFlagSet("temporal")
	tf.register(fs)
	dataDir := fs.String("data-dir", defaultDataDir, "the state directory: the server's SQLite file is <data-dir>/temporal/"+devserver.DBFileName)
	ip := fs.String("temporal-ip", "127.0.0.1", "the IP the frontend and the UI listen on (0.0.0.0: every interface)")
	namespace := fs.String("temporal-namespace", "default", "the namespace registered at start (if missing)")
	fs.Alias("temporal-namespace", "TEMPORAL_NAMESPACE")
	if err := parse(fs, args); err != nil {
		return err
	}
	ts, err := devserver.Start(ctx, devserver.Options{DataDir: temporalDir(*dataDir), IP: *ip,
		FrontendPort: tf.port, UIPort: tf.uiPort, UIWriteActions: tf.uiWrite, Namespace: *namespace, Logger: log})
	if err != nil {
		return fmt.Errorf("start temporal: %w", err)
	}
	log.Info("temporal ready", "address", ts.FrontendAddress(), "namespace", ts.Namespace(), "ui", orNone(ts.UIURL()),
		"db", filepath.Join(temporalDir(*dataDir), devserver.DBFileName))
	<-ctx.Done()
	log.Info("temporal stopping")
	return ts.Stop()
}
