package releasebundle

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// entry is one file of the tar: from the layout's directory (name) or
// streamed from an artifact's source.
type entry struct {
	name string
	size int64
	blob *sourcedBlob
}

// entries are the tar's files in order: the layout's files, the
// signature, then every blob (the layout's and the streamed ones) in
// digest order; oras-go's scratch directory left out.
func (l *Layout) entries() ([]entry, error) {
	var list []entry
	for _, name := range []string{ocispec.ImageLayoutFile, ocispec.ImageIndexFile, SignatureFile} {
		info, err := os.Stat(filepath.Join(l.dir, name))
		if err != nil {
			return nil, fmt.Errorf("bundle layout: %w", err)
		}
		list = append(list, entry{name: name, size: info.Size()})
	}
	blobs, err := os.ReadDir(filepath.Join(l.dir, ocispec.ImageBlobsDir, "sha256"))
	if err != nil {
		return nil, fmt.Errorf("bundle layout: %w", err)
	}
	onDisk := map[digest.Digest]bool{}
	for _, b := range blobs {
		info, err := b.Info()
		if err != nil {
			return nil, fmt.Errorf("bundle layout: %w", err)
		}
		d := digest.NewDigestFromEncoded(digest.SHA256, b.Name())
		onDisk[d] = true
		list = append(list, entry{name: blobName(d), size: info.Size()})
	}
	for d, b := range l.streamed {
		if !onDisk[d] { // a blob Write pushed too (an empty config)
			list = append(list, entry{name: blobName(d), size: b.desc.Size, blob: &b})
		}
	}
	slices.SortFunc(list[3:], func(a, b entry) int { return strings.Compare(a.name, b.name) })
	return list, nil
}

func blobName(d digest.Digest) string {
	return ocispec.ImageBlobsDir + "/" + d.Algorithm().String() + "/" + d.Encoded()
}

// A tar is, per file, its header (archive/tar's encoding) and its content
// padded to whole blocks; then two zero blocks. Tar frames the content
// itself so that a blob's file is copied to w by io.Copy, which the kernel
// does when both are files (copy_file_range) or w is an HTTP answer of
// known length (sendfile).
const blockSize = 512

var zeros [2 * blockSize]byte

// header is an entry's tar header as archive/tar encodes it (one block;
// more for a long name or a size past 8 GiB).
func header(e entry) ([]byte, error) {
	var buf bytes.Buffer
	h := &tar.Header{Typeflag: tar.TypeReg, Name: e.name, Size: e.size, Mode: 0o644, ModTime: epoch}
	if err := tar.NewWriter(&buf).WriteHeader(h); err != nil {
		return nil, fmt.Errorf("bundle tar: %s: %w", e.name, err)
	}
	return buf.Bytes(), nil
}

// epoch is every entry's modification time: a bundle's bytes depend on
// its contents only.
var epoch = time.Unix(0, 0).UTC()

func padding(size int64) int64 { return -size & (blockSize - 1) }

// Size is the length of the tar Tar writes.
func (l *Layout) Size() (int64, error) {
	list, err := l.entries()
	if err != nil {
		return 0, err
	}
	n := int64(len(zeros))
	for _, e := range list {
		hdr, err := header(e)
		if err != nil {
			return 0, err
		}
		n += int64(len(hdr)) + e.size + padding(e.size)
	}
	return n, nil
}

// Tar writes the bundle as a tar to w, Size bytes: the layout's files and
// the streamed blobs. An error midway leaves w cut short.
func (l *Layout) Tar(ctx context.Context, w io.Writer) error {
	list, err := l.entries()
	if err != nil {
		return err
	}
	for _, e := range list {
		hdr, err := header(e)
		if err != nil {
			return err
		}
		if _, err := w.Write(hdr); err != nil {
			return fmt.Errorf("bundle tar: %s: %w", e.name, err)
		}
		if err := l.copyEntry(ctx, w, e); err != nil {
			return fmt.Errorf("bundle tar: %s: %w", e.name, err)
		}
		if _, err := w.Write(zeros[:padding(e.size)]); err != nil {
			return fmt.Errorf("bundle tar: %s: %w", e.name, err)
		}
	}
	_, err = w.Write(zeros[:])
	return err
}
