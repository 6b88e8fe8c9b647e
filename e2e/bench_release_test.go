package e2e

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// BenchmarkRelease: a release of the small test app (testdata/release-app,
// a sandbox and two terraform_data components) to N installs
// (OUTPOST_BENCH_RELEASE_INSTALLS, default 5), each with its own runner
// process, all in one batch and one install per batch. Each iteration
// deploys version 2 or back to version 1 (second's module changes: one
// terraform job per install). Reported: the release's wall time (created →
// succeeded), the sum of its deploy_config operations' times (what single
// deploys one after the other would take), and the control plane's CPU per
// install: this test process's (API, worker, in-process Temporal server,
// gateway; not the runners and terraform, which are child processes).
//
//	go test ./e2e -run '^$' -bench BenchmarkRelease -benchtime 3x -timeout 20m
func BenchmarkRelease(b *testing.B) {
	n := provBenchEnv(b, "OUTPOST_BENCH_RELEASE_INSTALLS", 5)
	for _, batch := range []int{n, 1} {
		b.Run(fmt.Sprintf("installs=%d/batch=%d", n, batch), func(b *testing.B) {
			s, dir := newStack(b, stackOptions{}), b.TempDir()
			copyDir(b, "testdata/release-app", dir)
			s.syncConfig(dir)
			s.releaseInstalls(n, "")
			copyFile(b, "testdata/release-v2/main.tf", filepath.Join(dir, "modules", "second", "main.tf"))
			copyFile(b, "testdata/release-v2/second.toml", filepath.Join(dir, "components", "second.toml"))
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
