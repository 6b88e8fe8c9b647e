package oci_test

import (
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/internal/testutil"
)

// BenchmarkDockerBuild times the docker_image job on docker_test.go's test
// image (multi-stage, FROM the tool image in the vendor registry, a build
// argument), from the job's start to the image pushed by digest:
//   - cold: the engine's build cache and the component's local image are
//     removed first (untimed), so the base is pulled and every step runs;
//   - cached: a one-line change of the file the last step copies, so the
//     RUN step comes from the layer cache (checked in the job's log).
func BenchmarkDockerBuild(b *testing.B) {
	testutil.NeedDockerEngine(b)
	_, access := vendor(b)
	args := map[string]string{"BASE": baseImage(b, access, "org_a/tools/base"), "GREETING": "bonjour"}
	files := map[string]string{"build/Dockerfile": dockerfile, "hello.txt": "hello\n"}
	for _, cold := range []bool{true, false} {
		b.Run(map[bool]string{true: "cold", false: "cached"}[cold], func(b *testing.B) {
			mustRun(b, dockerJob(b, access, files, args)) // the cache as the last build left it
			var took time.Duration
			for i := range b.N {
				if cold {
					forgetBuilds(b)
				}
				files["hello.txt"] = fmt.Sprintf("hello %d %v\n", i, cold)
				start := time.Now()
				j := mustRun(b, dockerJob(b, access, files, args))
				took += time.Since(start)
				if cached := stepCached(j.logs, `RUN ["/tool", "write", "/out/greeting"]`); cached == cold {
					b.Fatalf("cold=%v, but the RUN step cached=%v:\n%s", cold, cached, j.logs)
				}
			}
			b.ReportMetric(took.Seconds()/float64(b.N), "s/build")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// forgetBuilds empties the engine's build cache and removes the local
// image the job keeps of the component (docker.go's "outpost-build/…").
func forgetBuilds(b *testing.B) {
	b.Helper()
	exec.Command("docker", "image", "rm", "-f", "outpost-build/org_a-app_1-api:latest").Run() // absent is fine
	if out, err := exec.Command("docker", "builder", "prune", "-af").CombinedOutput(); err != nil {
		b.Fatalf("docker builder prune: %v\n%s", err, out)
	}
}
