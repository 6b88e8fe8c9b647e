package main

import (
	"context"
	"net/http"

	"github.com/outpost-dev/outpost/internal/envflag"
	"github.com/outpost-dev/outpost/internal/metrics"
)

// metricsListenFlag adds -metrics-listen, where a control plane process
// serves GET /metrics: a listener of its own, unauthenticated, for an
// internal network only (docs/architecture/metrics.md).
func metricsListenFlag(fs *envflag.FlagSet) *string {
	return fs.String("metrics-listen", "",
		"address of GET /metrics (Prometheus), unauthenticated: bind it where only your monitoring reaches (default: none)")
}

// alongside is what runs beside the plane for -metrics-listen: a server of
// the process's metrics, or nothing when addr is empty.
func (p *plane) alongside(addr string) []func(context.Context) error {
	if addr == "" {
		return nil
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+metrics.Path, metrics.Handler(p.metrics, p.log))
	return []func(context.Context) error{p.serveOn("metrics", addr, mux)}
}
