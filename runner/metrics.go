package runner

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/outpost-dev/outpost/internal/metrics"
)

// MetricsPath is where the runner's health address serves its Prometheus
// metrics (docs/architecture/metrics.md).
const MetricsPath = metrics.Path

// runnerMetrics are the runner's own metrics, in a registry of its own.
type runnerMetrics struct {
	reg           *prometheus.Registry
	jobs          *prometheus.CounterVec
	duration      *prometheus.HistogramVec
	gatewayErrors *prometheus.CounterVec
}

func newRunnerMetrics(r *Runner) *runnerMetrics {
	m := &runnerMetrics{
		reg: metrics.NewRegistry(),
		jobs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "outpost_runner_jobs_total",
			Help: "Jobs this runner ran to their end, by job type and result (succeeded, failed, cancelled; dropped: the gateway did not take the result).",
		}, []string{"type", "result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "outpost_runner_job_duration_seconds",
			Help:    "Time from a job's claim to its completion on this runner, by job type.",
			Buckets: []float64{.1, .5, 1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600},
		}, []string{"type"}),
		gatewayErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "outpost_runner_gateway_errors_total",
			Help: "Failed calls to the gateway, by kind: dns, tls, proxy, http, network, clock.",
		}, []string{"kind"}),
	}
	running := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "outpost_runner_running_jobs",
		Help: "Jobs running on this runner now.",
	}, func() float64 { return float64(r.running.Load()) })
	for _, kind := range []string{"dns", "tls", "proxy", "http", "network", "clock"} {
		m.gatewayErrors.WithLabelValues(kind) // present at 0 from the start
	}
	m.reg.MustRegister(m.jobs, m.duration, m.gatewayErrors, running)
	return m
}

// jobEnded counts a job whose completion was sent (accepted or not).
func (m *runnerMetrics) jobEnded(jobType, status string, accepted bool, ran time.Duration) {
	result := status
	if !accepted {
		result = "dropped"
	}
	m.jobs.WithLabelValues(jobType, result).Inc()
	m.duration.WithLabelValues(jobType).Observe(ran.Seconds())
}

func (m *runnerMetrics) handler(r *Runner) http.Handler { return metrics.Handler(m.reg, r.log) }
