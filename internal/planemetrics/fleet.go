package planemetrics

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/outpost-dev/outpost/store"
)

// scrapeTimeout bounds the queries of one scrape.
const scrapeTimeout = 5 * time.Second

// Counter counts the fleet (store.Store does).
type Counter interface {
	CountFleet(ctx context.Context, onlineWindow time.Duration) (store.FleetStats, error)
}

// Fleet is a collector whose gauges are counted in the database at each
// scrape: runners online, jobs waiting to be claimed, operations by kind
// and status.
type Fleet struct {
	counter      Counter
	onlineWindow time.Duration
}

// NewFleet returns the fleet's collector; a runner counts as online when
// seen within onlineWindow.
func NewFleet(c Counter, onlineWindow time.Duration) *Fleet {
	return &Fleet{counter: c, onlineWindow: onlineWindow}
}

var (
	runnersOnlineDesc = prometheus.NewDesc("outpost_runners_online",
		"Runners seen by a gateway within the online window.", nil, nil)
	jobsQueuedDesc = prometheus.NewDesc("outpost_jobs_queued",
		"Jobs waiting to be claimed by their runner.", nil, nil)
	operationsDesc = prometheus.NewDesc("outpost_operations",
		"Install operations in the database, by kind and status.", []string{"kind", "status"}, nil)
	deliveriesDesc = prometheus.NewDesc("outpost_webhook_deliveries",
		"Notification deliveries in the database, by state (pending, delivered, failed).", []string{"state"}, nil)
)

// Describe sends the fleet's descriptors.
func (f *Fleet) Describe(ch chan<- *prometheus.Desc) {
	ch <- runnersOnlineDesc
	ch <- jobsQueuedDesc
	ch <- operationsDesc
	ch <- deliveriesDesc
}

// Collect counts the fleet now. A failed query yields an invalid metric,
// which the handler logs and leaves out of the scrape.
func (f *Fleet) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	st, err := f.counter.CountFleet(ctx, f.onlineWindow)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(runnersOnlineDesc, fmt.Errorf("count the fleet: %w", err))
		return
	}
	ch <- prometheus.MustNewConstMetric(runnersOnlineDesc, prometheus.GaugeValue, float64(st.RunnersOnline))
	ch <- prometheus.MustNewConstMetric(jobsQueuedDesc, prometheus.GaugeValue, float64(st.JobsQueued))
	for k, n := range st.Operations {
		ch <- prometheus.MustNewConstMetric(operationsDesc, prometheus.GaugeValue, float64(n), k.Kind, k.Status)
	}
	for state, n := range st.Deliveries {
		ch <- prometheus.MustNewConstMetric(deliveriesDesc, prometheus.GaugeValue, float64(n), state)
	}
}
