package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
)

// BenchmarkDockerBuildToRunning times, on the demo app with examples/build-app laid over it,
// an install already provisioned (untimed), a one-line change of the site's
// page from the config sync's POST to the moment the deploy has finished
// and the site's Deployment runs the new build from the install's
// registry: the build runner's docker build and push, the sync into the
// install's registry and the chart's upgrade. The build's own time (its
// job, as the API records it) is reported beside it.
func BenchmarkDockerBuildToRunning(b *testing.B) {
	s, app, inst := provisionBuildExample(b, "bench-site")
	page := filepath.Join(app, "images", "site", "public", "index.html")
	var total, build time.Duration
	for i := range b.N {
		if err := os.WriteFile(page, fmt.Appendf(nil, "<!doctype html>\n<title>bench %d</title>\n", i), 0o644); err != nil {
			b.Fatal(err)
		}
		before := s.installComponents(inst)["site_image"].Digest
		start := time.Now()
		s.syncConfig(app)
		op := s.waitOp(inst, s.startOp(inst, "/deploy", nil).ID, 5*time.Minute)
		took := time.Since(start)
		if op.Status != status.OpSucceeded {
			b.Fatalf("deploy: %s %q", op.Status, op.Error)
		}
		img := s.checkSiteRunsItsImage(inst)
		if img.Digest == before {
			b.Fatalf("the deploy kept the image %s", before)
		}
		total += took
		build += s.buildTime(img.BuildID)
	}
	b.ReportMetric(total.Seconds()/float64(b.N), "sync-to-running-s")
	b.ReportMetric(build.Seconds()/float64(b.N), "build-s")
	b.ReportMetric(0, "ns/op")
}

// buildTime is how long a build took, from its creation (the sync that
// queued it) to its end, as the API shows it.
func (s *stack) buildTime(buildID string) time.Duration {
	s.t.Helper()
	var b struct {
		CreatedAt  time.Time  `json:"created_at"`
		FinishedAt *time.Time `json:"finished_at"`
	}
	s.do("GET", "/v1/apps/"+s.install.AppID+"/builds/"+buildID, nil, &b)
	if b.FinishedAt == nil {
		s.t.Fatalf("build %s has not finished", buildID)
	}
	return b.FinishedAt.Sub(b.CreatedAt)
}
