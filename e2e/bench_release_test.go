package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/api/gateway"
)

// BenchmarkRelease: a release of a 5-component app (testdata/bench-release-app:
// a sandbox; network ← {db, cache} ← api, terraform modules whose variables
// read their dependencies' outputs; web, an external image in a stand-in
// public registry, which api reads) to N installs
// (OUTPOST_BENCH_RELEASE_INSTALLS, default 5), each with its own runner
// process, all in one batch and one install per batch. Each iteration
// deploys version 2 or back to version 1: network's module changes, so each
// install applies network, then db and cache, then api (four terraform jobs
// in dependency order); the sandbox and web end unchanged. Reported: the
// release's wall time (created → succeeded), the sum of its deploy_config
// operations' times (what single deploys one after the other would take),
// and the control plane's CPU per install: this test process's (API, worker,
// in-process Temporal server, gateway; not the runners and terraform, which
// are child processes).
//
//	go test ./e2e -run '^$' -bench BenchmarkRelease -benchtime 3x -timeout 30m
func BenchmarkRelease(b *testing.B) {
	n := provBenchEnv(b, "OUTPOST_BENCH_RELEASE_INSTALLS", 5)
	for _, batch := range []int{n, 1} {
		b.Run(fmt.Sprintf("installs=%d/batch=%d", n, batch), func(b *testing.B) {
			// The gateway's default intervals (a 60 s lease), as in production: the
			// tests' 4 s lease is lost when N installs provision at once on 2 cores.
			s, dir := newStack(b, stackOptions{intervals: gateway.DefaultIntervals}), benchReleaseApp(b)
			s.syncConfig(dir)
			s.releaseInstalls(n, "")
			copyFile(b, "testdata/bench-release-v2/network.tf", filepath.Join(dir, "modules", "network", "main.tf"))
			s.syncConfig(dir)
			var wall, ops, cpu time.Duration
			for i := 0; i < b.N; i++ {
				cpu0, start := selfCPU(b), time.Now()
				r := s.startRelease(map[string]any{"config_version": 2 - i%2, "installs": map[string]any{"selector": "env=prod"}, "batch_size": batch})
				r = s.waitRelease(r.ID, "succeeded")
				wall += time.Since(start)
				cpu += selfCPU(b) - cpu0
				ops += s.releaseOpsTime(r)
			}
			b.ReportMetric(wall.Seconds()/float64(b.N), "wall-s/release")
			b.ReportMetric(ops.Seconds()/float64(b.N), "sum-of-deploys-s/release")
			b.ReportMetric(cpu.Seconds()/float64(b.N*n), "cp-cpu-s/install")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// benchReleaseApp copies testdata/bench-release-app into a directory of its
// own, with web's image pushed to a stand-in public registry.
func benchReleaseApp(b *testing.B) string {
	ref, _ := publicImage(b, "library/web:1.0", 1<<20, 3)
	dir := b.TempDir()
	copyDir(b, "testdata/bench-release-app", dir)
	web := filepath.Join(dir, "components", "web.toml")
	toml, _ := os.ReadFile(web)
	if err := os.WriteFile(web, bytes.ReplaceAll(toml, []byte("IMAGE"), []byte(ref)), 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

// releaseOpsTime is the sum of the release's operations' times.
func (s *stack) releaseOpsTime(r release) time.Duration {
	var sum time.Duration
	for _, b := range r.Batches {
		for _, ri := range b.Installs {
			var op struct {
				CreatedAt  time.Time `json:"created_at"`
				FinishedAt time.Time `json:"finished_at"`
			}
			s.do("GET", "/v1/installs/"+ri.InstallID+"/operations/"+ri.OperationID, nil, &op)
			sum += op.FinishedAt.Sub(op.CreatedAt)
		}
	}
	return sum
}

// selfCPU is the CPU time this process has used (not its children's).
func selfCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
