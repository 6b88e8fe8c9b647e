package metrics

import (
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Path is where every process serves its metrics.
const Path = "/metrics"

// NewRegistry returns a registry with the Go runtime's and the process's
// collectors.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// Handler serves reg in the Prometheus text format. A collector that fails
// (the database did not answer) is logged and left out of that scrape; the
// others are still served.
func Handler(reg *prometheus.Registry, log *slog.Logger) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:            slogErrors{log},
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: 4,
	})
}

// slogErrors adapts a slog.Logger to promhttp.Logger.
type slogErrors struct{ log *slog.Logger }

func (l slogErrors) Println(v ...any) { l.log.Warn("metrics: a collector failed", "err", v) }
