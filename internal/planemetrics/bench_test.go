package planemetrics_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/internal/metrics"
	"github.com/outpost-dev/outpost/internal/planemetrics"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

// BenchmarkScrape10kRunners: one GET /metrics of a control plane process
// over HTTP, its fleet gauges counted in PostgreSQL with 10,000 runners
// (all online), 10,000 install operations (4 kinds × 3 statuses), 100,000
// finished jobs and 1,000 queued; the gateway's histograms hold 8 job types.
func BenchmarkScrape10kRunners(b *testing.B) {
	s := storetest.Open(b, store.Postgres)
	for _, q := range []string{
		`INSERT INTO runners (id, org_id, kind, name, capabilities, last_seen_at, created_at)
		 SELECT 'rnr_' || i, 'org_1', 'install', 'r' || i, '[]', now(), now() FROM generate_series(1, 10000) i`,
		`INSERT INTO install_operations (id, org_id, install_id, kind, approval_mode, workflow_id, status, created_at)
		 SELECT 'op_' || i, 'org_1', 'ins_' || (i % 10000), (ARRAY['provision','deploy','deprovision','drift_check'])[1 + i % 4],
		        'auto', 'wf_' || i, (ARRAY['succeeded','failed','running'])[1 + i % 3], now() FROM generate_series(1, 10000) i`,
		`INSERT INTO jobs (id, org_id, runner_id, idempotency_key, type, manifest, status, created_at, updated_at)
		 SELECT 'job_' || i, 'org_1', 'rnr_' || (i % 10000), 'k' || i, 'terraform', '{}',
		        CASE WHEN i <= 1000 THEN 'queued' ELSE 'succeeded' END, now(), now() FROM generate_series(1, 101000) i`,
		`ANALYZE`,
	} {
		if err := s.DB().Exec(q).Error; err != nil {
			b.Fatal(err)
		}
	}
	reg := metrics.NewRegistry()
	reg.MustRegister(planemetrics.NewFleet(s, store.DefaultOnlineWindow))
	g := planemetrics.NewGateway(reg)
	for _, typ := range []string{"terraform", "helm", "oci", "command", "noop", "support", "helm_chart", "docker_image"} {
		g.JobClaimed(typ, time.Second)
		g.JobCompleted(typ, "succeeded", time.Minute)
		g.JobCompleted(typ, "failed", time.Minute)
	}
	srv := httptest.NewServer(metrics.Handler(reg, slog.New(slog.DiscardHandler)))
	defer srv.Close()
	var size int64
	for b.Loop() {
		resp, err := http.Get(srv.URL)
		if err != nil {
			b.Fatal(err)
		}
		size, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("GET /metrics: %d", resp.StatusCode)
		}
	}
	b.ReportMetric(float64(size), "bytes/scrape")
}
