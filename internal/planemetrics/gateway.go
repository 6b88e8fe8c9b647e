package planemetrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Gateway implements gateway.Metrics with histograms.
type Gateway struct {
	claimLatency *prometheus.HistogramVec
	jobDuration  *prometheus.HistogramVec
}

// NewGateway registers the gateway's metrics in reg.
func NewGateway(reg prometheus.Registerer) *Gateway {
	g := &Gateway{
		claimLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "outpost_job_claim_latency_seconds",
			Help:    "Time from a job being queued to a runner claiming it (first attempts), by job type.",
			Buckets: []float64{.01, .05, .1, .5, 1, 5, 15, 60, 300, 1800, 3600},
		}, []string{"type"}),
		jobDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "outpost_job_duration_seconds",
			Help:    "Time from a job's first claim to its completion, by job type and final status.",
			Buckets: []float64{.1, .5, 1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600},
		}, []string{"type", "status"}),
	}
	reg.MustRegister(g.claimLatency, g.jobDuration)
	return g
}

// JobClaimed observes a claim's latency.
func (g *Gateway) JobClaimed(jobType string, waited time.Duration) {
	g.claimLatency.WithLabelValues(jobType).Observe(waited.Seconds())
}

// JobCompleted observes a job's duration.
func (g *Gateway) JobCompleted(jobType, status string, ran time.Duration) {
	g.jobDuration.WithLabelValues(jobType, status).Observe(ran.Seconds())
}
