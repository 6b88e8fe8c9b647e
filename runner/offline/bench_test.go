package offline

import (
	"context"
	"crypto/ed25519"
	"os"
	"testing"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/releasebundle"
	"github.com/outpost-dev/outpost/releasebundle/bundletest"
)

// BenchmarkBundleLoad is the import side of a bundle: verified, opened,
// and its two artifacts loaded into an empty registry on disk over
// loopback HTTP, as `outpost-runner offline deploy` does before and in its
// sync step. MB/s of the tar's bytes; x-cp is cp's time over the load's,
// a cp of the same tar run after each iteration (releasebundle's
// BenchmarkBundleExport).
func BenchmarkBundleLoad(b *testing.B) {
	f := bundletest.New(b, bundletest.BenchLayer)
	archive, err := appconfig.ArchiveDir(os.DirFS("../../examples/demo-app"), ".")
	if err != nil {
		b.Fatal(err)
	}
	f.Contents.ConfigArchive = archive
	path := f.Export(b, b.TempDir())
	cp := bundletest.NewBeside(b, path)
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		srv, err := registry.Start(context.Background(), registry.Config{Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		cp.Time(b, func() { loadAll(b, path, f.Pub, protocol.RegistryAccess{Address: srv.Addr(), PlainHTTP: true}) })
		b.StopTimer()
		srv.Close()
		os.RemoveAll(dir)
		b.StartTimer()
	}
	cp.Report(b)
}

// loadAll verifies and opens the bundle, then loads each of its two
// artifacts into reg, checking that the registry serves its manifest.
func loadAll(b *testing.B, path string, pub ed25519.PublicKey, reg protocol.RegistryAccess) {
	ctx := context.Background()
	report, err := releasebundle.Verify(ctx, path, pub)
	if err != nil {
		b.Fatal(err)
	}
	bun, err := openBundle(ctx, path, report)
	if err != nil {
		b.Fatal(err)
	}
	if len(bun.artifacts) != 2 {
		b.Fatalf("the bundle holds %d artifacts, want 2", len(bun.artifacts))
	}
	all, err := bun.loadAll(ctx, reg)
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range all {
		if want := bun.artifacts[l.component].Digest.String(); l.artifact.Digest != want || l.artifact.Size < bundletest.BenchLayer {
			b.Fatalf("%s: loaded %s (%d bytes), want %s of at least %d bytes", l.component, l.artifact.Digest, l.artifact.Size, want, bundletest.BenchLayer)
		}
	}
}
