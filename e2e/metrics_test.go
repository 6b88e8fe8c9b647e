package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/protocol"
)

// Every process serves /metrics: an `outpost api` (API and gateway), an
// `outpost worker` and the install's runner (on its health address). After
// a provision of a sandbox-only app, each answer parses with Prometheus's
// text parser and counts what happened: the operation succeeded, the
// terraform jobs ran and were claimed, the runner is online, nothing waits.
func TestMetricsOnEveryProcess(t *testing.T) {
	rp := startReplicasWith(t, replicaOptions{apis: 1, workers: 1, metrics: true})
	dir := t.TempDir()
	copyDir(t, "testdata/slow-app", dir)
	if err := os.RemoveAll(filepath.Join(dir, "components")); err != nil {
		t.Fatal(err)
	}
	s := rp.app(t, dir)
	health := testutil.FreeAddr(t)
	inst, _ := s.newInstallWithRunner("cust-metrics", []string{"OUTPOST_HEALTH_ADDR=" + health})
	if op := s.waitOp(inst, s.startOp(inst, "/provision", nil).ID, 3*time.Minute); op.Status != status.OpSucceeded {
		t.Fatalf("provision: %s %q %+v", op.Status, op.Error, op.Steps)
	}
	tf := map[string]string{"type": protocol.JobTypeTerraform}
	for i, url := range rp.metrics {
		m := scrape(t, url)
		atLeast(t, url, m, "outpost_operations", map[string]string{"kind": "provision", "status": "succeeded"}, 1)
		atLeast(t, url, m, "outpost_runners_online", nil, 1)
		equal(t, url, m, "outpost_jobs_queued", nil, 0)
		equal(t, url, m, "outpost_webhook_deliveries", map[string]string{"state": "failed"}, 0)
		atLeast(t, url, m, "go_goroutines", nil, 1)
		atLeast(t, url, m, "process_resident_memory_bytes", nil, 1)
		if i == 0 { // the API process: its gateway saw the claims and completions
			atLeast(t, url, m, "outpost_job_claim_latency_seconds", tf, 1)
			atLeast(t, url, m, "outpost_job_duration_seconds", map[string]string{"type": protocol.JobTypeTerraform, "status": "succeeded"}, 1)
		}
	}
	url := "http://" + health + "/metrics"
	m := scrape(t, url)
	atLeast(t, url, m, "outpost_runner_jobs_total", map[string]string{"type": protocol.JobTypeTerraform, "result": "succeeded"}, 1)
	atLeast(t, url, m, "outpost_runner_job_duration_seconds", tf, 1)
	equal(t, url, m, "outpost_runner_running_jobs", nil, 0)
	atLeast(t, url, m, "outpost_runner_gateway_errors_total", map[string]string{"kind": "dns"}, 0)
	atLeast(t, url, m, "go_goroutines", nil, 1)
}

// scrape GETs url and parses it as the Prometheus text format.
func scrape(t testing.TB, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return fams
}

// value is the value of the metric of the family name whose labels include
// want: a gauge's or counter's value, a histogram's count; false if none.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			match = match && have[k] == v
		}
		if !match {
			continue
		}
		switch {
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

func atLeast(t testing.TB, url string, fams map[string]*dto.MetricFamily, name string, labels map[string]string, min float64) {
	t.Helper()
	if v, ok := value(fams, name, labels); !ok || v < min {
		t.Errorf("%s: %s%v = %v (present: %v), want at least %v", url, name, labels, v, ok, min)
	}
}

func equal(t testing.TB, url string, fams map[string]*dto.MetricFamily, name string, labels map[string]string, want float64) {
	t.Helper()
	if v, ok := value(fams, name, labels); !ok || v != want {
		t.Errorf("%s: %s%v = %v (present: %v), want %v", url, name, labels, v, ok, want)
	}
}
