package releasebundle_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/outpost-dev/outpost/releasebundle"
	"github.com/outpost-dev/outpost/releasebundle/bundletest"
)

// benchLayer is each of the bundle's two artifacts' layer size.
const benchLayer = 32 << 20

// BenchmarkBundleExport lays a bundle out from the embedded registry (on
// disk: manifests and HEADs over loopback HTTP) and writes its tar to a
// file, the layers read from the registry's storage, as the API of a
// process that serves the registry does; MB/s of the tar's bytes.
// Compare with BenchmarkBundleCopyBaseline.
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
	b.SetBytes(tarSize(b, f))
	b.ResetTimer()
	for b.Loop() {
		dir := b.TempDir()
		f.Export(b, dir)
		b.StopTimer()
		os.RemoveAll(dir)
		b.StartTimer()
	}
}

// BenchmarkBundleVerify verifies a bundle (outpost-runner offline verify).
func BenchmarkBundleVerify(b *testing.B) {
	f := bundletest.New(b, benchLayer)
	path := f.Export(b, b.TempDir())
	b.SetBytes(tarSize(b, f))
	b.ResetTimer()
	for b.Loop() {
		if _, err := releasebundle.Verify(context.Background(), path, f.Pub); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBundleCopyBaseline is a plain cp of the bundle's tar on the
// same disk: what export and verify are measured against.
func BenchmarkBundleCopyBaseline(b *testing.B) {
	f := bundletest.New(b, benchLayer)
	path := f.Export(b, b.TempDir())
	b.SetBytes(tarSize(b, f))
	dst := filepath.Join(b.TempDir(), "copy.tar")
	b.ResetTimer()
	for b.Loop() {
		if out, err := exec.Command("cp", path, dst).CombinedOutput(); err != nil {
			b.Fatalf("cp: %v %s", err, out)
		}
		b.StopTimer()
		os.Remove(dst)
		b.StartTimer()
	}
}

func tarSize(b *testing.B, f bundletest.Fixture) int64 {
	b.Helper()
	info, err := os.Stat(f.Export(b, b.TempDir()))
	if err != nil {
		b.Fatal(err)
	}
	return info.Size()
}
