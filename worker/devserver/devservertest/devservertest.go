// Package devservertest starts an in-process Temporal dev server for a test
// and dials it.
package devservertest

import (
	"context"
	"log/slog"
	"os"
	"testing"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/outpost-dev/outpost/worker/devserver"
)

// Client starts a Temporal dev server with opts (stopped when tb ends) and
// returns a client of it (closed then) that logs warnings and worse.
func Client(tb testing.TB, opts devserver.Options) client.Client {
	tb.Helper()
	srv, err := devserver.Start(context.Background(), opts)
	if err != nil {
		tb.Fatalf("start Temporal: %v", err)
	}
	tb.Cleanup(func() { _ = srv.Stop() })
	c, err := client.Dial(client.Options{HostPort: srv.FrontendAddress(), Namespace: srv.Namespace(),
		Logger: sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.Close)
	return c
}
