package runner

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/outpost-dev/outpost/protocol"
)

// A job owns its directory: in place of its result or its support bundle it
// may leave a symlink, a hard link or a FIFO to what only root (the runner)
// reads. The runner reads and uploads neither, and does not hang on a FIFO.
func TestResultAndBundleAreNotReadThroughALink(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "root-only")
	if err := os.WriteFile(secret, []byte(`{"status":"succeeded","error":"oprn_secret"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var uploaded atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b, _ := io.ReadAll(r.Body); len(b) > 0 {
			uploaded.Add(1)
		}
	}))
	defer srv.Close()
	c := newClient(srv.URL, http.DefaultTransport)
	plant := map[string]func(string) error{
		"symlink":   func(p string) error { return os.Symlink(secret, p) },
		"hard link": func(p string) error { return os.Link(secret, p) },
		"FIFO":      func(p string) error { return syscall.Mkfifo(p, 0o644) },
	}
	for name, plant := range plant {
		dir := t.TempDir()
		if err := plant(filepath.Join(dir, resultFile)); err != nil {
			t.Fatal(err)
		}
		if res, err := ReadResult(dir); err == nil || strings.Contains(res.Error, "oprn_") {
			t.Errorf("a result that is a %s: read %+v, err %v; want it refused", name, res, err)
		}
		bundle := filepath.Join(dir, protocol.SupportBundleFile)
		if err := plant(bundle); err != nil {
			t.Fatal(err)
		}
		if err := c.UploadBundle(context.Background(), "job-1", 1, bundle); err == nil {
			t.Errorf("a support bundle that is a %s: uploaded", name)
		}
	}
	if n := uploaded.Load(); n != 0 {
		t.Errorf("the gateway got %d bundles through links", n)
	}

	dir := t.TempDir() // a file of the job's own is read
	if err := os.WriteFile(filepath.Join(dir, resultFile), []byte(`{"status":"succeeded"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if res, err := ReadResult(dir); err != nil || res.Status != protocol.StatusSucceeded {
		t.Errorf("a plain result: %+v, %v", res, err)
	}
}
