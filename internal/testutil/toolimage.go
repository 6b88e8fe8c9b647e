package testutil

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// here is this file's directory.
func here() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

var (
	engineOnce sync.Once
	engineSkip string
)

// NeedDockerEngine skips the test when no Docker engine answers and none
// can be started (scripts/docker.sh engine).
func NeedDockerEngine(t testing.TB) {
	t.Helper()
	engineOnce.Do(func() {
		if exec.Command("docker", "info").Run() == nil {
			return
		}
		script := filepath.Join(here(), "..", "..", "scripts", "docker.sh")
		if out, err := exec.Command("bash", script, "engine").CombinedOutput(); err != nil {
			engineSkip = "no Docker engine could be started (scripts/docker.sh engine: " + err.Error() + "):\n" + string(out)
		}
	})
	if engineSkip != "" {
		t.Skip(engineSkip)
	}
}

// ToolImage is a scratch-based OCI image holding /tool (testdata/tool, a
// static binary built here, its entrypoint): "tool write FILE" writes
// $GREETING to FILE, "tool fail" fails with exit code 3.
func ToolImage(t testing.TB) v1.Image {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "tool")
	build := exec.Command("go", "build", "-o", bin, filepath.Join(here(), "testdata", "tool"))
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the tool: %v\n%s", err, out)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "tool", Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg})
	tw.Write(data)
	tw.Close()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil },
		tarball.WithMediaType(types.OCILayer))
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	img, err = mutate.ConfigFile(img, &v1.ConfigFile{OS: "linux", Architecture: runtime.GOARCH,
		RootFS: cfg.RootFS, Config: v1.Config{Entrypoint: []string{"/tool"}}})
	if err != nil {
		t.Fatal(err)
	}
	return img
}
