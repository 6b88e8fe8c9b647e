package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/outpost-dev/outpost/internal/envflag"
	"github.com/outpost-dev/outpost/internal/httpserver"
)

// healthListenFlag adds -health-listen, where a worker answers its health
// checks (a Kubernetes readiness probe).
func healthListenFlag(fs *envflag.FlagSet) *string {
	return fs.String("health-listen", "",
		"address of GET /healthz: 200 once the worker runs and the database and Temporal answer (default: none)")
}

// serveHealth listens on addr and answers GET /healthz with 200 while the
// database and Temporal answer, 503 otherwise, until ctx is done. It runs
// alongside a started worker (plane.run), so an answer means it runs.
func (p *plane) serveHealth(addr string) func(context.Context) error {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", p.healthz)
	return p.serveOn("health", addr, mux)
}

// serveOn listens on addr and serves h until ctx is done: a process's
// operations endpoint (health, metrics), with httpserver's defaults.
func (p *plane) serveOn(name, addr string, h http.Handler) func(context.Context) error {
	return func(ctx context.Context) error {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("%s: listen on %s: %w", name, addr, err)
		}
		return serveListener(ctx, p.log, name, ln, httpserver.New(h, httpserver.Defaults))
	}
}

func (p *plane) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	err := p.store.Ping(ctx)
	if err == nil {
		if _, err = p.temporal.CheckHealth(ctx, nil); err != nil {
			err = fmt.Errorf("temporal: %w", err)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if err != nil {
		p.log.Warn("health check failed", slog.Any("err", err))
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, `{"status":"unavailable"}`)
		return
	}
	fmt.Fprintln(w, `{"status":"ok"}`)
}
