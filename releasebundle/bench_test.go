package releasebundle_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/releasebundle"
	"github.com/outpost-dev/outpost/releasebundle/bundletest"
)

// benchLayer is each of the bundle's two artifacts' layer size.
const benchLayer = 32 << 20

// BenchmarkBundleExport lays a bundle out from the embedded registry (on
// disk: manifests and HEADs over loopback HTTP) and writes its tar to a
// file, the layers read from the registry's storage, as the API of a
// process that serves the registry does; MB/s of the tar's bytes, and
// x-cp: its speed as a multiple of a cp of the same tar run beside each
// iteration.
func BenchmarkBundleExport(b *testing.B) {
	benchExport(b, bundletest.New(b, benchLayer))
}

// BenchmarkBundleExportOverHTTP is BenchmarkBundleExport with the layers
// fetched over loopback HTTP and checked against their digests, as the
// API does when another process serves the registry.
func BenchmarkBundleExportOverHTTP(b *testing.B) {
	benchExport(b, bundletest.New(b, benchLayer).OverHTTP())
}

func benchExport(b *testing.B, f bundletest.Fixture) {
	cp := newBeside(b, f.Export(b, b.TempDir()))
	for b.Loop() {
		dir := b.TempDir()
		cp.time(b, func() { f.Export(b, dir) })
		b.StopTimer()
		os.RemoveAll(dir)
		b.StartTimer()
	}
	cp.report(b)
}

// BenchmarkBundleVerify verifies a bundle (outpost-runner offline verify);
// x-cp as for BenchmarkBundleExport.
func BenchmarkBundleVerify(b *testing.B) {
	f := bundletest.New(b, benchLayer)
	path := f.Export(b, b.TempDir())
	cp := newBeside(b, path)
	for b.Loop() {
		cp.time(b, func() {
			if _, err := releasebundle.Verify(context.Background(), path, f.Pub); err != nil {
				b.Fatal(err)
			}
		})
	}
	cp.report(b)
}

// BenchmarkBundleCopyBaseline is a plain cp of the bundle's tar on the
// same disk: what export and verify are measured against.
func BenchmarkBundleCopyBaseline(b *testing.B) {
	cp := newBeside(b, bundletest.New(b, benchLayer).Export(b, b.TempDir()))
	for b.Loop() {
		cp.copy(b)
	}
}

// beside is a cp of a bundle's tar (on the same disk, page cache warm as
// for the rest), timed apart from b's timer, beside each iteration: the
// machine's load changes less between the two than between benchmarks.
type beside struct {
	src, dst string
	cp, op   time.Duration
}

// newBeside sets b's bytes to the tar's size and resets its timer.
func newBeside(b *testing.B, tarPath string) *beside {
	info, err := os.Stat(tarPath)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(info.Size())
	b.ResetTimer()
	return &beside{src: tarPath, dst: filepath.Join(b.TempDir(), "copy.tar")}
}

// time runs op timed, then a cp untimed by b.
func (c *beside) time(b *testing.B, op func()) {
	start := time.Now()
	op()
	c.op += time.Since(start)
	b.StopTimer()
	start = time.Now()
	c.copy(b)
	c.cp += time.Since(start)
	b.StartTimer()
}

// copy copies the tar with cp, then removes the copy untimed.
func (c *beside) copy(b *testing.B) {
	if out, err := exec.Command("cp", c.src, c.dst).CombinedOutput(); err != nil {
		b.Fatalf("cp: %v %s", err, out)
	}
	b.StopTimer()
	os.Remove(c.dst)
	b.StartTimer()
}

// report reports x-cp: cp's time over the operation's, so 0.5 is half
// cp's speed.
func (c *beside) report(b *testing.B) {
	b.ReportMetric(float64(c.cp)/float64(c.op), "x-cp")
}
