package ociclient_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/runner/ociclient"
)

// BenchmarkSyncModule is a provision's sync of a component's module: a small
// terraform-module artifact the job fetched already, copied from memory into
// a new repository (outpost/<component>, tag v1) of an install registry on
// disk with a basic-auth user, as the example's is. Each iteration syncs
// into a repository of its own. Besides the time it reports the process's
// CPU per sync, client and registry together, in user space and in the
// kernel (the registry's file writes and fsyncs: most of it, and what
// varies most from run to run), and the requests one such sync sends
// (counted once, untimed).
//
//	go test ./runner/ociclient -run '^$' -bench BenchmarkSyncModule -benchtime 300x
func BenchmarkSyncModule(b *testing.B) {
	ctx := b.Context()
	_, vendor := startRegistry(b)
	ref := pushModule(b, vendor, "org/app/web", []byte("a terraform module's gzipped tar, 1 KiB or so in practice"))
	_, got, err := ociclient.FetchTerraformModule(ctx, ref)
	if err != nil {
		b.Fatal(err)
	}
	creds := registry.Static{Username: "install", Password: "install-secret-1"}
	install, err := registry.Start(context.Background(), registry.Config{Dir: b.TempDir(), Auth: creds})
	if err != nil {
		b.Fatal(err)
	}
	defer install.Close()
	access := protocol.RegistryAccess{Address: install.Addr(), Username: creds.Username, Password: creds.Password, PlainHTTP: true}
	sync := func(access protocol.RegistryAccess, repository string) {
		dst, err := ociclient.NewTarget(protocol.OCIDestination{Registry: access, Repository: repository, Tag: "v1"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ociclient.Sync(ctx, io.Discard, ref, dst, got); err != nil {
			b.Fatal(err)
		}
	}

	var requests atomic.Int32
	target, _ := url.Parse("http://" + install.Addr())
	proxy := httputil.NewSingleHostReverseProxy(target)
	counted := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" { // not the 401 that asks for the credential
			requests.Add(1)
		}
		proxy.ServeHTTP(w, r)
	}))
	countedAccess := access
	countedAccess.Address = strings.TrimPrefix(counted.URL, "http://")
	sync(countedAccess, "outpost/counted")
	counted.Close()

	user, system := cpuTime(b)
	b.ResetTimer()
	for i := range b.N {
		sync(access, fmt.Sprintf("outpost/c%d", i))
	}
	b.StopTimer()
	user2, system2 := cpuTime(b)
	perOp := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(b.N) }
	b.ReportMetric(perOp(user2-user), "user-ms/op")
	b.ReportMetric(perOp(system2-system), "sys-ms/op")
	b.ReportMetric(float64(requests.Load()), "requests/sync")
}

// cpuTime is the process's CPU time so far, in user space and in the kernel.
func cpuTime(b *testing.B) (user, system time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}
