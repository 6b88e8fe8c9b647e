package localcluster

import (
	"archive/tar"
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"runtime"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

//go:embed pause/pause.c
var pauseSource []byte

// importPause compiles pause/pause.c statically and imports it into
// containerd as PauseImage, the pod sandbox image.
func (n *Node) importPause(ctx context.Context) error {
	src, bin := n.path("pause.c"), n.path("pause")
	if err := os.WriteFile(src, pauseSource, 0o600); err != nil {
		return err
	}
	if out, err := exec.CommandContext(ctx, "gcc", "-static", "-Os", "-o", bin, src).CombinedOutput(); err != nil {
		return fmt.Errorf("gcc -static %s: %w: %s (static linking needs libc6-dev)", src, err, out)
	}
	img, err := BinaryImage(bin)
	if err != nil {
		return err
	}
	tb := n.path("pause.tar")
	if err := WriteImageTarball(tb, PauseImage, img); err != nil {
		return err
	}
	return n.LoadImage(ctx, tb)
}

// BinaryImage is a linux image of this machine's architecture holding only
// the file bin (a static executable), as /<its name>, run with args: a
// Dockerfile's FROM scratch, COPY and ENTRYPOINT.
func BinaryImage(bin string, args ...string) (v1.Image, error) {
	return BinariesImage([]string{bin}, args...)
}

// BinariesImage is BinaryImage with several static executables, each as
// /<its name>; the first is the entrypoint.
func BinariesImage(bins []string, args ...string) (v1.Image, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, bin := range bins {
		data, err := os.ReadFile(bin)
		if err != nil {
			return nil, fmt.Errorf("image binary: %w", err)
		}
		if err := tw.WriteHeader(&tar.Header{Name: path.Base(bin), Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	file := "/" + path.Base(bins[0])
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(buf.Bytes())), nil
	})
	if err != nil {
		return nil, fmt.Errorf("image layer: %w", err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Config.Entrypoint = []string{file}
	cf.Config.Cmd = args
	return mutate.ConfigFile(img, cf)
}

// WriteImageTarball writes img, named ref, to the tarball file path, for
// Node.LoadImage.
func WriteImageTarball(path, ref string, img v1.Image) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("image name %q: %w", ref, err)
	}
	if err := tarball.WriteToFile(path, tag, img); err != nil {
		return fmt.Errorf("writing image %s to %s: %w", ref, path, err)
	}
	return nil
}
