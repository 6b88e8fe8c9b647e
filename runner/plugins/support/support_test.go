package support

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/plugins"
)

// run executes a support job in a fresh directory holding a runner log, and returns its archive's
// files (nil when it failed) and its error.
func run(t *testing.T, m protocol.SupportManifest) (map[string]string, protocol.SupportOutputs, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, protocol.SupportRunnerLogFile), []byte("level=INFO msg=\"runner started\" token=oprn_abcdefgh1234\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(m)
	p := New()
	if err := p.Validate(raw); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Execute(context.Background(), plugins.Run{Dir: dir, Stdout: io.Discard, Stderr: io.Discard}); err != nil {
		return nil, protocol.SupportOutputs{}, err
	}
	var out protocol.SupportOutputs
	if b, err := p.Outputs(); err != nil || json.Unmarshal(b, &out) != nil {
		t.Fatalf("outputs: %s %v", b, err)
	}
	f, err := os.Open(filepath.Join(dir, protocol.SupportBundleFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for tr := tar.NewReader(gz); ; {
		h, err := tr.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		files[h.Name] = string(b)
	}
	return files, out, nil
}

// Without a cluster the bundle still holds the runner's log and the control plane's parts, redacted,
// and says why the cluster's parts are missing; over its cap it is refused, saying both sizes.
func TestSupportBundleWithoutAClusterAndOverItsCap(t *testing.T) {
	m := protocol.SupportManifest{Redact: []string{"hunter2-db"}, Files: map[string]string{"jobs.txt": "job_1 failed: password hunter2-db refused\n"}}
	files, out, err := run(t, m)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"runner.log", "jobs.txt", "cluster.txt", "index.txt"}
	if !slices.Equal(out.Parts, want) || len(files) != len(want) {
		t.Fatalf("parts %v (%d files), want %v", out.Parts, len(files), want)
	}
	if got := files["bundle/jobs.txt"]; got != "job_1 failed: password [REDACTED] refused\n" {
		t.Errorf("jobs.txt = %q", got)
	}
	if got := files["bundle/runner.log"]; !strings.Contains(got, "runner started") || strings.Contains(got, "oprn_") {
		t.Errorf("runner.log = %q", got)
	}
	if got := files["bundle/cluster.txt"]; !strings.HasPrefix(got, "unavailable: the install has no cluster") || len(out.Unavailable) != 1 {
		t.Errorf("cluster.txt = %q, unavailable %v", got, out.Unavailable)
	}
	m.MaxBytes = 100
	if _, _, err := run(t, m); err == nil || !strings.Contains(err.Error(), "over its cap of 100 bytes") {
		t.Fatalf("a bundle over a 100-byte cap: %v", err)
	}
}
