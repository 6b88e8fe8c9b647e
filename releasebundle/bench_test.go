package releasebundle_test

import (
	"context"
	"os"
	"testing"

	"github.com/outpost-dev/outpost/releasebundle"
	"github.com/outpost-dev/outpost/releasebundle/bundletest"
)

// BenchmarkBundleExport lays a bundle out from the embedded registry (on
// disk: manifests and HEADs over loopback HTTP) and writes its tar to a
// file, the layers read from the registry's storage, as the API of a
// process that serves the registry does; MB/s of the tar's bytes, and
// x-cp: its speed as a multiple of a cp of the same tar run beside each
// iteration.
func BenchmarkBundleExport(b *testing.B) {
	benchExport(b, bundletest.New(b, bundletest.BenchLayer))
}

// BenchmarkBundleExportOverHTTP is BenchmarkBundleExport with the layers
// fetched over loopback HTTP and checked against their digests, as the
// API does when another process serves the registry.
func BenchmarkBundleExportOverHTTP(b *testing.B) {
	benchExport(b, bundletest.New(b, bundletest.BenchLayer).OverHTTP())
}

func benchExport(b *testing.B, f bundletest.Fixture) {
	cp := bundletest.NewBeside(b, f.Export(b, b.TempDir()))
	for b.Loop() {
		dir := b.TempDir()
		cp.Time(b, func() { f.Export(b, dir) })
		b.StopTimer()
		os.RemoveAll(dir)
		b.StartTimer()
	}
	cp.Report(b)
}

// BenchmarkBundleVerify verifies a bundle (outpost-runner offline verify);
// x-cp as for BenchmarkBundleExport.
func BenchmarkBundleVerify(b *testing.B) {
	f := bundletest.New(b, bundletest.BenchLayer)
	path := f.Export(b, b.TempDir())
	cp := bundletest.NewBeside(b, path)
	for b.Loop() {
		cp.Time(b, func() {
			if _, err := releasebundle.Verify(context.Background(), path, f.Pub); err != nil {
				b.Fatal(err)
			}
		})
	}
	cp.Report(b)
}

// BenchmarkBundleCopyBaseline is a plain cp of the bundle's tar on the
// same disk: what export and verify are measured against.
func BenchmarkBundleCopyBaseline(b *testing.B) {
	cp := bundletest.NewBeside(b, bundletest.New(b, bundletest.BenchLayer).Export(b, b.TempDir()))
	for b.Loop() {
		cp.Copy(b)
	}
}
