package e2e

// BenchmarkWebhookDelivery measures how soon a subscribed webhook hears of an
// event: from the event's time (stamped by the worker when the operation's
// end is recorded) to the signed delivery arriving at a receiver on loopback,
// through the DeliverNotification workflow on the real stack. Each iteration
// is one provision that fails (no runner comes within a second).
//
//	go test -c -o /tmp/notify-bench.test ./e2e && (cd e2e && /tmp/notify-bench.test -test.run '^$' \
//	    -test.bench BenchmarkWebhookDelivery -test.benchtime 30x -test.v)
//
// docs/benchmarks-day-two.md ("Notifications: event to webhook") holds the figures.

import (
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
)

func BenchmarkWebhookDelivery(b *testing.B) {
	s := newStack(b, stackOptions{runnerTimeout: time.Second})
	s.syncConfig("testdata/failing-app")
	recv := newWebhookReceiver(b)
	recv.subscribe(s, map[string]any{"name": "bench", "event_types": []string{"operation.failed"}})
	n := 0
	failOne := func() {
		n++
		var inst struct {
			ID string `json:"id"`
		}
		s.do("POST", "/v1/installs", map[string]any{"app_id": s.install.AppID, "name": "bench-" + time.Now().Format("150405.000000")}, &inst)
		op := s.startOp(inst.ID, "/provision", nil)
		if done := s.waitOp(inst.ID, op.ID, time.Minute); done.Status != status.OpFailed {
			b.Fatalf("operation %s, want failed", done.Status)
		}
		waitFor(b, time.Minute, "the webhook", func() bool { evs, _ := recv.events(); return len(evs) == n })
	}
	failOne() // warm-up, untimed: the first delivery workflow
	b.ResetTimer()
	for b.Loop() {
		failOne()
	}
	b.StopTimer()
	evs, bad := recv.events()
	if len(bad) > 0 {
		b.Fatalf("%d deliveries with a bad signature", len(bad))
	}
	var lat []time.Duration
	for i, at := range recv.arrivals() {
		if i > 0 { // the warm-up's
			lat = append(lat, at.Sub(evs[i].Time))
		}
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(actBenchPercentile(lat, 50).Microseconds())/1000, "event-to-webhook-p50-ms")
	b.ReportMetric(float64(actBenchPercentile(lat, 99).Microseconds())/1000, "event-to-webhook-p99-ms")
	b.Logf("%d deliveries; event → webhook received (ms): %s", len(lat), actBenchMillis(lat))
}
