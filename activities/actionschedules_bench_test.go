package activities_test

// BenchmarkCronActionsAt1000Installs measures what 1,000 installs with one
// cron action each cost on a real Temporal server (the in-process dev
// server, SQLite): schedules created per second by ReconcileActionSchedules,
// and the time one install's reconcile takes with the 1,000 in place (it
// finds the install's own by prefix). The schedules fire once a day, so no
// run competes with the creation.
//
//	go test -run '^$' -bench BenchmarkCronActionsAt1000Installs -benchtime 1x -timeout 20m ./activities/
//
// docs/benchmarks-day-two.md ("Cron actions at 1,000 installs") holds the figures.

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/activities"
)

const cronBenchInstalls = 1000

func BenchmarkCronActionsAt1000Installs(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	sc := scheduleClient(b, "cron-bench")
	every := map[string][]string{"ping": {"0 3 * * *"}}
	for b.Loop() {
		start := time.Now()
		for i := range cronBenchInstalls {
			if err := activities.ReconcileActionSchedules(ctx, sc, "bench-q", fmt.Sprintf("ins_%04d", i), every); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(cronBenchInstalls/time.Since(start).Seconds(), "schedules/s")
	}
	var lat []time.Duration
	for i := range 20 {
		t0 := time.Now()
		if err := activities.ReconcileActionSchedules(ctx, sc, "bench-q", fmt.Sprintf("ins_%04d", i*7), every); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "reconcile-p50-ms")
	b.ReportMetric(0, "ns/op")
}
