package releasebundle

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"oras.land/oras-go/v2/content"
)

// copyEntry copies an entry's content, exactly its size, to w: a
// layout's file; a streamed blob from the registry's storage when the
// artifact has Files and the blob's file is of the size its descriptor
// says (read as the registry serves it, which checked its digest when it
// was pushed); else fetched from its source and checked against its
// digest.
func (l *Layout) copyEntry(ctx context.Context, w io.Writer, e entry) error {
	if e.blob == nil {
		return copyFile(w, filepath.Join(l.dir, filepath.FromSlash(e.name)), e.size)
	}
	if b := e.blob; b.files != nil {
		if f, err := b.files.OpenBlob(b.desc.Digest); err == nil {
			defer f.Close()
			if info, err := f.Stat(); err == nil && info.Size() == e.size {
				return copyExactly(w, f, e.size)
			}
		}
	}
	rc, err := e.blob.src.Fetch(ctx, e.blob.desc)
	if err != nil {
		return err
	}
	defer rc.Close()
	vr := content.NewVerifyReader(rc, e.blob.desc)
	if _, err := io.CopyBuffer(struct{ io.Writer }{w}, vr, make([]byte, copyBuffer)); err != nil {
		return err
	}
	return vr.Verify()
}

func copyFile(w io.Writer, path string, size int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return copyExactly(w, f, size)
}

// copyExactly copies size bytes of f to w (io.Copy: the kernel's copy
// when w can take it from a file).
func copyExactly(w io.Writer, f *os.File, size int64) error {
	n, err := io.Copy(w, io.LimitReader(f, size))
	if err == nil && n != size {
		err = fmt.Errorf("%d bytes, want %d", n, size)
	}
	return err
}
