package registry_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/outpost-dev/outpost/registry"
)

// layerOf returns an image's first layer: its digest and its bytes.
func layerOf(tb testing.TB, img v1.Image) (v1.Hash, []byte) {
	tb.Helper()
	layers, err := img.Layers()
	if err != nil {
		tb.Fatal(err)
	}
	d, _ := layers[0].Digest()
	rc, err := layers[0].Compressed()
	if err != nil {
		tb.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		tb.Fatal(err)
	}
	return d, b
}

func get(tb testing.TB, method, url string, header ...string) (*http.Response, []byte) {
	tb.Helper()
	req, _ := http.NewRequest(method, url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp, b
}

// A registry on disk serves a repository's blobs whole, by range and to
// HEAD, with distribution's headers, from their files; a repository that
// does not hold a blob does not serve it, though another repository of the
// registry does.
func TestBlobsOnDisk(t *testing.T) {
	s := start(t, registry.Config{Dir: t.TempDir()})
	img := newImage(t)
	if err := push(t, ref(t, s, "org_a/app_1/web"), img); err != nil {
		t.Fatal(err)
	}
	d, data := layerOf(t, img)
	url := fmt.Sprintf("http://%s/v2/org_a/app_1/web/blobs/%s", s.Addr(), d)

	resp, body := get(t, http.MethodGet, url)
	h := resp.Header
	if resp.StatusCode != http.StatusOK || !bytes.Equal(body, data) {
		t.Fatalf("GET: %d, %d bytes; want 200 and the layer's %d bytes", resp.StatusCode, len(body), len(data))
	}
	for k, want := range map[string]string{
		"Docker-Content-Digest": d.String(), "Etag": `"` + d.String() + `"`, "Content-Length": fmt.Sprint(len(data)),
		"Cache-Control": "max-age=31536000", "Content-Type": "application/octet-stream", "Accept-Ranges": "bytes",
	} {
		if got := h.Get(k); got != want {
			t.Errorf("GET: %s %q, want %q", k, got, want)
		}
	}

	resp, body = get(t, http.MethodGet, url, "Range", "bytes=10-19")
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(body, data[10:20]) {
		t.Errorf("GET bytes 10-19: %d, %q; want 206 and %q", resp.StatusCode, body, data[10:20])
	}
	resp, body = get(t, http.MethodGet, url, "If-None-Match", `"`+d.String()+`"`)
	if resp.StatusCode != http.StatusNotModified || len(body) != 0 {
		t.Errorf("GET If-None-Match: %d with %d bytes; want 304", resp.StatusCode, len(body))
	}
	resp, body = get(t, http.MethodHead, url)
	if resp.StatusCode != http.StatusOK || len(body) != 0 || resp.Header.Get("Content-Length") != fmt.Sprint(len(data)) {
		t.Errorf("HEAD: %d, %d bytes, Content-Length %s; want 200, no body, %d", resp.StatusCode, len(body), resp.Header.Get("Content-Length"), len(data))
	}

	// Served from its file: not through a read buffer of 4 MiB per request,
	// as distribution's blob server does (the registry runs in this process).
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const gets = 20
	for range gets {
		get(t, http.MethodGet, url)
	}
	runtime.ReadMemStats(&after)
	if perGet := (after.TotalAlloc - before.TotalAlloc) / gets; perGet > 1<<20 {
		t.Errorf("%d bytes allocated per GET of a %d-byte blob, want well under the 4 MiB of distribution's blob server", perGet, len(data))
	}

	other := fmt.Sprintf("http://%s/v2/org_b/app_2/web/blobs/%s", s.Addr(), d)
	if resp, _ := get(t, http.MethodGet, other); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET from a repository without the blob: %d, want 404", resp.StatusCode)
	}
}

// BenchmarkBlobGet: a small blob (1 KiB) pulled again and again from a
// registry on disk, over loopback HTTP with keep-alive. B/op and allocs/op
// count the registry's allocations together with the client's.
func BenchmarkBlobGet(b *testing.B) {
	s, err := registry.Start(b.Context(), registry.Config{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	img := newImage(b)
	if err := push(b, ref(b, s, "org_a/app_1/web"), img); err != nil {
		b.Fatal(err)
	}
	d, data := layerOf(b, img)
	url := fmt.Sprintf("http://%s/v2/org_a/app_1/web/blobs/%s", s.Addr(), d)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		resp, body := get(b, http.MethodGet, url)
		if resp.StatusCode != http.StatusOK || len(body) != len(data) {
			b.Fatalf("GET: %d, %d bytes", resp.StatusCode, len(body))
		}
	}
}
