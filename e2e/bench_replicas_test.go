package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
)

// BenchmarkReplicasProvision: provisions of the example app per minute, and
// the control plane's CPU (APIs, workers and the Temporal server, read from
// /proc) per provision, with one or two APIs and one or two workers on one
// PostgreSQL and one Temporal server. Each iteration provisions
// OUTPOST_BENCH_REPLICA_INSTALLS (default 4) new installs at once, each with
// its runner process, started through the APIs in turn. Run with
// -benchtime=1x: an iteration is a whole provision of every install.
func BenchmarkReplicasProvision(b *testing.B) {
	n := provBenchEnv(b, "OUTPOST_BENCH_REPLICA_INSTALLS", 4)
	for _, c := range []struct{ apis, workers int }{{1, 1}, {1, 2}, {2, 1}, {2, 2}} {
		b.Run(fmt.Sprintf("apis=%d/workers=%d", c.apis, c.workers), func(b *testing.B) {
			rp := startReplicas(b, c.apis, c.workers)
			s := rp.demoApp(b)
			var wall, cpu time.Duration
			provisions := 0
			for i := 0; i < b.N; i++ {
				installs := make([]string, n)
				for j := range installs {
					installs[j], _ = s.newInstall(fmt.Sprintf("b%d-%d", i, j), map[string]any{"name": "db_password", "value": "pw", "sensitive": true})
				}
				cpu0, start := rp.cpu(b), time.Now()
				ops := make([]string, n)
				for j, inst := range installs {
					s.apiURL = rp.apis[j%len(rp.apis)]
					ops[j] = s.startOp(inst, "/provision", nil).ID
				}
				for j, inst := range installs {
					if op := s.waitOp(inst, ops[j], 10*time.Minute); op.Status != status.OpSucceeded {
						b.Fatalf("provision of %s: %s %q", inst, op.Status, op.Error)
					}
				}
				wall += time.Since(start)
				cpu += rp.cpu(b) - cpu0
				provisions += n
			}
			b.ReportMetric(float64(provisions)/wall.Minutes(), "provisions/min")
			b.ReportMetric(cpu.Seconds()/float64(provisions), "cp-cpu-s/provision")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// cpu is the CPU time the control plane's processes (APIs, workers, the
// Temporal server) have used so far.
func (rp *replicas) cpu(tb testing.TB) time.Duration {
	var sum time.Duration
	for _, p := range append(append([]*process{rp.temporal}, rp.apiProcs...), rp.workers...) {
		sum += processCPU(tb, p.cmd.Process.Pid)
	}
	return sum
}

// processCPU is a process's user + system time, from /proc/<pid>/stat
// (fields 14 and 15, in clock ticks of 1/100 s on Linux).
func processCPU(tb testing.TB, pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		tb.Fatalf("CPU time of %d: %v", pid, err)
	}
	// The command name, in parentheses, may hold spaces: count from after it.
	fields := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
