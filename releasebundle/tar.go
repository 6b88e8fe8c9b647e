package releasebundle

import (
	"archive/tar"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// copyBuffer is the buffer Tar copies each blob through.
const copyBuffer = 1 << 20

// Tar writes the layout Write built in dir as a tar to w: the layout's
// files, the signature, then the blobs in digest order (oras-go's
// scratch directory left out).
func Tar(w io.Writer, dir string) error {
	blobs, err := os.ReadDir(filepath.Join(dir, ocispec.ImageBlobsDir, "sha256"))
	if err != nil {
		return fmt.Errorf("bundle layout: %w", err)
	}
	names := []string{ocispec.ImageLayoutFile, ocispec.ImageIndexFile, SignatureFile}
	for _, b := range blobs {
		names = append(names, ocispec.ImageBlobsDir+"/sha256/"+b.Name())
	}
	slices.Sort(names[3:])
	tw := tar.NewWriter(w)
	buf := make([]byte, copyBuffer)
	for _, name := range names {
		if err := addFile(tw, dir, name, buf); err != nil {
			return err
		}
	}
	return tw.Close()
}

// epoch is every entry's modification time: a bundle's bytes depend on
// its contents only.
var epoch = time.Unix(0, 0).UTC()

func addFile(tw *tar.Writer, dir, name string, buf []byte) error {
	f, err := os.Open(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		return fmt.Errorf("bundle layout: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("bundle layout: %w", err)
	}
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: info.Size(), Mode: 0o644, ModTime: epoch}
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("bundle tar: %s: %w", name, err)
	}
	if _, err := io.CopyBuffer(tw, struct{ io.Reader }{f}, buf); err != nil {
		return fmt.Errorf("bundle tar: %s: %w", name, err)
	}
	return nil
}
