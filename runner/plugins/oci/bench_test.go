package oci_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"oras.land/oras-go/v2"
	orasremote "oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/registry"
)

// Benchmark image: 5 random layers of 20 MB.
const (
	benchLayers     = 5
	benchLayerBytes = 20 << 20
)

// benchSource is a vendor registry on disk holding the benchmark image.
func benchSource(b *testing.B) (protocol.RegistryAccess, string, int64) {
	b.Helper()
	s := startRegistry(b, registry.Config{Dir: b.TempDir(), Auth: registry.Tokens{Keys: &registry.StaticKeys{vendorKey}}})
	user, pass := registry.IssueCredential(vendorKey, "bench", []registry.Scope{{Repository: "org_a/", Actions: []string{"pull", "push"}}}, 24*time.Hour, time.Now())
	access := protocol.RegistryAccess{Address: s.Addr(), Username: user, Password: pass, PlainHTTP: true}
	img, err := random.Image(benchLayerBytes, benchLayers)
	if err != nil {
		b.Fatal(err)
	}
	digest := push(b, access, "org_a/app_1/web", "v1", img)
	return access, digest.String(), imageSize(b, img)
}

// benchDestination is a fresh install registry on disk; stop closes it
// and removes its directory.
func benchDestination(b *testing.B) (dst protocol.RegistryAccess, stop func()) {
	b.Helper()
	dir, err := os.MkdirTemp("", "bench-registry")
	if err != nil {
		b.Fatal(err)
	}
	s, err := registry.Start(context.Background(), registry.Config{Dir: dir, Auth: registry.Static{Username: "install", Password: "install-secret-1"}})
	if err != nil {
		b.Fatal(err)
	}
	return protocol.RegistryAccess{Address: s.Addr(), Username: "install", Password: "install-secret-1", PlainHTTP: true},
		func() { s.Close(); os.RemoveAll(dir) }
}

// keychain gives each registry its own credential, for crane.
type keychain map[string]protocol.RegistryAccess

func (k keychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	a, ok := k[r.RegistryStr()]
	if !ok {
		return authn.Anonymous, nil
	}
	return &authn.Basic{Username: a.Username, Password: a.Password}, nil
}

func orasRepo(b *testing.B, a protocol.RegistryAccess, repo string) *orasremote.Repository {
	r, err := orasremote.NewRepository(a.Address + "/" + repo)
	if err != nil {
		b.Fatal(err)
	}
	r.PlainHTTP = true
	r.Client = &auth.Client{Cache: auth.NewCache(), Credential: auth.StaticCredential(a.Address, auth.Credential{Username: a.Username, Password: a.Password})}
	return r
}

// BenchmarkSync copies a 100 MB image (5 × 20 MB layers) between two
// registries on disk, each iteration into a fresh destination registry: the
// sync job, crane.Copy and oras.Copy of the same image; and a re-sync of an
// artifact the destination already holds.
//
//	go test ./runner/plugins/oci -run '^$' -bench BenchmarkSync -benchtime 3x
func BenchmarkSync(b *testing.B) {
	src, digest, size := benchSource(b)
	from := src.Address + "/org_a/app_1/web@" + digest

	copies := []struct {
		name string
		copy func(b *testing.B, dst protocol.RegistryAccess)
	}{
		{"job", func(b *testing.B, dst protocol.RegistryAccess) {
			mustRun(b, syncManifest(src, "org_a/app_1/web", digest, dst, "v1"))
		}},
		{"crane.Copy", func(b *testing.B, dst protocol.RegistryAccess) {
			err := crane.Copy(from, dst.Address+"/web:v1", crane.Insecure,
				crane.WithAuthFromKeychain(keychain{src.Address: src, dst.Address: dst}))
			if err != nil {
				b.Fatal(err)
			}
		}},
		{"oras.Copy", func(b *testing.B, dst protocol.RegistryAccess) {
			_, err := oras.Copy(context.Background(), orasRepo(b, src, "org_a/app_1/web"), digest,
				orasRepo(b, dst, "web"), "v1", oras.CopyOptions{CopyGraphOptions: oras.CopyGraphOptions{Concurrency: 8}})
			if err != nil {
				b.Fatal(err)
			}
		}},
	}
	for _, c := range copies {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				dst, stop := benchDestination(b)
				b.StartTimer()
				c.copy(b, dst)
				b.StopTimer()
				stop()
				b.StartTimer()
			}
			reportMBps(b, size)
		})
	}

	b.Run("resync", func(b *testing.B) {
		dst, stop := benchDestination(b)
		defer stop()
		mustRun(b, syncManifest(src, "org_a/app_1/web", digest, dst, "v1"))
		b.ResetTimer()
		for range b.N {
			mustRun(b, syncManifest(src, "org_a/app_1/web", digest, dst, "v1"))
		}
	})
}

func reportMBps(b *testing.B, size int64) {
	b.ReportMetric(float64(size)*float64(b.N)/1e6/b.Elapsed().Seconds(), "MB/s")
	b.ReportMetric(float64(size)/1e6, "MB")
}
