package e2e

// BenchmarkOfflineDeploy measures a provision from a signed release bundle
// (`outpost-runner offline deploy`) against a connected provision of the
// same app on the same machine: the example demo app as it is (a sandbox
// starting the install's registry, four terraform components, a local
// cluster and a chart in it, migrate's hook before api and warm_cache's
// after it), its builds made once by the stack's build runner.
//
//	go test -c -o /tmp/e2e.test ./e2e && (cd e2e && /tmp/e2e.test -test.run '^$' -test.bench BenchmarkOfflineDeploy -test.benchtime 1x -test.timeout 30m)
//
// OUTPOST_BENCH_REPS sets the timed repetitions of each (default 3), after
// one untimed warm-up of each. docs/BENCHMARKS.md ("Offline deploy") holds
// the figures.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkOfflineDeploy times, in alternating order, on a fresh install
// each: a connected provision (from POST …/provision to the API answering
// that it finished; the install's runner online before), and an offline
// deploy of the config version's bundle with a fresh state directory (the
// process, from start to exit: verify, sandbox, loading the builds into the
// install's registry, each component). Medians are reported.
func BenchmarkOfflineDeploy(b *testing.B) {
	reps := provBenchEnv(b, "OUTPOST_BENCH_REPS", 3)
	s, c, _, bundle, key := exampleBundle(b)
	info, err := os.Stat(bundle)
	if err != nil {
		b.Fatal(err)
	}

	var connected, offline []time.Duration
	for rep := range reps + 1 { // rep 0: the warm-up
		for k := range 2 {
			name := fmt.Sprintf("bench-%d-%d", rep, k)
			var d time.Duration
			if (rep+k)%2 == 0 {
				d = benchConnectedProvision(b, s, name)
			} else {
				d = benchOfflineDeploy(b, s, c, name, bundle, key)
			}
			switch {
			case rep == 0:
			case (rep+k)%2 == 0:
				connected = append(connected, d)
			default:
				offline = append(offline, d)
			}
		}
	}
	con, off := provBenchMedian(connected), provBenchMedian(offline)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(con.Seconds(), "connected-s")
	b.ReportMetric(off.Seconds(), "offline-s")
	b.ReportMetric(off.Seconds()/con.Seconds(), "x-offline-vs-connected")
	b.Logf("demo app (9 steps), bundle %d bytes, medians of %d: connected provision %.2fs, offline deploy %.2fs (%.2f×)",
		info.Size(), reps, con.Seconds(), off.Seconds(), off.Seconds()/con.Seconds())
	b.Logf("runs (s): connected %s; offline %s", provBenchSeconds(connected), provBenchSeconds(offline))
}

// benchConnectedProvision provisions a new install with a runner of its
// own, timing the provision alone, then deprovisions it (untimed).
func benchConnectedProvision(b *testing.B, s *stack, name string) time.Duration {
	inst, _ := s.newInstall(name, map[string]any{"name": "db_password", "value": name + "-pa55", "sensitive": true})
	s.waitRunnerOnline(inst)
	start := time.Now()
	s.provisioned(inst, 5*time.Minute)
	d := time.Since(start)
	s.waitOp(inst, s.startOp(inst, "/deprovision", nil).ID, 5*time.Minute)
	return d
}

// benchOfflineDeploy deploys the bundle to a new install with a fresh state
// directory, timing the command.
func benchOfflineDeploy(b *testing.B, s *stack, c *cli, name, bundle, key string) time.Duration {
	dir := b.TempDir()
	inst, installFile := s.offlineInstall(c, name, dir, map[string]any{"name": "db_password", "value": "vendor-side", "sensitive": true})
	defer stopSandbox(b, inst)
	cmd := exec.Command(runnerBin, offlineDeployArgs(bundle, installFile, key, filepath.Join(dir, "state"), filepath.Join(dir, "result.json"),
		"db_password="+name+"-pa55")...)
	cmd.Env = offlineDeployEnv(dir)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	d := time.Since(start)
	if err != nil {
		b.Fatalf("offline deploy of %s: %v\n%s", name, err, out)
	}
	return d
}
