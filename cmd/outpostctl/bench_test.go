package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"testing"

	"github.com/outpost-dev/outpost/internal/testutil"
)

// BenchmarkStart times the built binary: `--help`, and `installs list`
// against a local stand-in of the API answering two installs (the CLI's
// cost, not the API's). docs/BENCHMARKS.md has the figures.
func BenchmarkStart(b *testing.B) {
	bin := testutil.BuildMain(b, "outpostctl")
	if fi, err := os.Stat(bin); err == nil {
		b.Logf("binary size: %.1f MiB", float64(fi.Size())/(1<<20))
	}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"installs":[{"id":"ins_1","org_id":"org_1","app_id":"app_1","name":"a","status":"provisioned","inputs":[],` +
			`"created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z"},{"id":"ins_2","org_id":"org_1","app_id":"app_1",` +
			`"name":"b","status":"created","inputs":[],"created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z"}]}`))
	}))
	b.Cleanup(api.Close)
	env := []string{"XDG_CONFIG_HOME=" + b.TempDir(), "OUTPOST_TOKEN=opat_bench"}
	for _, args := range [][]string{{"context", "add", "bench", "--api", api.URL}, {"--help"}, {"installs", "list"}} {
		if args[0] == "context" {
			run := exec.Command(bin, args...)
			run.Env = env
			if out, err := run.CombinedOutput(); err != nil {
				b.Fatalf("%v %s", err, out)
			}
			continue
		}
		b.Run(args[len(args)-1], func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command(bin, args...)
				cmd.Env = env
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v %s", err, out)
				}
			}
		})
	}
}
