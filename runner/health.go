package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// HealthPath is where the runner answers liveness probes (Config.HealthAddr).
const HealthPath = "/healthz"

// ReadyPath is where the runner answers readiness probes: 200 once the
// gateway accepted its token (and version), 503 before. The chart's rolling
// update waits for it, so a self-update's new pod replaces the old one only
// once it reached the control plane (helmupdate.go).
const ReadyPath = "/readyz"

// Health is the answer of HealthPath and ReadyPath.
type Health struct {
	Status      string `json:"status"` // "ok"; on ReadyPath "ready", "connecting" or "checking"
	Version     string `json:"version"`
	RunningJobs int64  `json:"running_jobs"`
}

// serveHealth serves HealthPath on addr until the returned stop is called.
// It answers 200 as long as Run runs, whether or not the gateway is
// reachable: liveness is the process's, and restarting a runner because the
// control plane is away would only cut off the jobs it runs.
func (r *Runner) serveHealth(addr string) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("health address: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+HealthPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(Health{Status: "ok", Version: Version, RunningJobs: r.running.Load()})
	})
	mux.HandleFunc("GET "+ReadyPath, func(w http.ResponseWriter, _ *http.Request) {
		h := Health{Status: "ready", Version: Version, RunningJobs: r.running.Load()}
		w.Header().Set("Content-Type", "application/json")
		switch {
		case !r.ready.Load():
			h.Status = "connecting"
			w.WriteHeader(http.StatusServiceUnavailable)
		case r.checking.Load():
			h.Status = "checking" // a self-update's new version, until it ran the health job (healthcheck.go)
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_ = json.NewEncoder(w).Encode(h)
	})
	mux.Handle("GET "+MetricsPath, r.metrics.handler(r))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			r.log.Error("health endpoint stopped", "err", err)
		}
	}()
	r.log.Info("serving liveness and readiness probes", "addr", ln.Addr().String(), "liveness", HealthPath, "readiness", ReadyPath, "metrics", MetricsPath)
	return func() {
		_ = srv.Close()
		<-done
	}, nil
}
