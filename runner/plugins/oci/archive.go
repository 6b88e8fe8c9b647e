package oci

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// Bounds of a source archive, so a bad one cannot fill the runner's disk.
const (
	maxSourceBytes = 512 << 20 // extracted
	maxSourceFiles = 20_000
)

// walkArchive calls fn for each directory and regular file of a gzipped tar
// archive, with its clean relative name. Anything else, a path leaving the
// archive's root, or an archive over the bounds is an error.
func walkArchive(archive []byte, fn func(name string, hdr *tar.Header, r io.Reader) error) error {
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		return fmt.Errorf("not a gzipped tar archive: %w", err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	var total int64
	files := 0
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the archive: %w", err)
		}
		name := path.Clean(strings.TrimPrefix(hdr.Name, "./"))
		switch {
		case hdr.Typeflag == tar.TypeXGlobalHeader || name == ".":
			continue
		case path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../"):
			return fmt.Errorf("%q: paths must stay inside the directory", hdr.Name)
		case hdr.Typeflag != tar.TypeDir && hdr.Typeflag != tar.TypeReg:
			return fmt.Errorf("%q: only directories and regular files are supported (type %q)", hdr.Name, hdr.Typeflag)
		case hdr.Typeflag == tar.TypeReg:
			files++
			total += hdr.Size
			if files > maxSourceFiles || total > maxSourceBytes {
				return fmt.Errorf("more than %d files or %d bytes", maxSourceFiles, maxSourceBytes)
			}
		}
		if err := fn(name, hdr, tr); err != nil {
			return err
		}
	}
}

// hasRootFile reports whether the archive holds a file at its root for
// which match is true.
func hasRootFile(archive []byte, match func(name string) bool) (bool, error) {
	found := false
	err := walkArchive(archive, func(name string, hdr *tar.Header, _ io.Reader) error {
		found = found || (hdr.Typeflag == tar.TypeReg && !strings.Contains(name, "/") && match(name))
		return nil
	})
	return found, err
}

// extractArchive unpacks the archive into dir.
func extractArchive(archive []byte, dir string) error {
	return walkArchive(archive, func(name string, hdr *tar.Header, r io.Reader) error {
		target := filepath.Join(dir, filepath.FromSlash(name))
		if hdr.Typeflag == tar.TypeDir {
			return os.MkdirAll(target, 0o700)
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
			return err
		}
		f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, io.LimitReader(r, hdr.Size))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
		return nil
	})
}

// normaliseArchive rewrites a gzipped tar archive with every time zeroed
// and no gzip header time, keeping entries, order and contents: the same
// files give the same bytes.
func normaliseArchive(archive []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	err := walkArchive(archive, func(_ string, hdr *tar.Header, r io.Reader) error {
		h := *hdr
		h.ModTime, h.AccessTime, h.ChangeTime = time.Unix(0, 0), time.Time{}, time.Time{}
		h.Uname, h.Gname, h.Uid, h.Gid = "", "", 0, 0
		h.PAXRecords, h.Format = nil, tar.FormatUnknown
		if err := tw.WriteHeader(&h); err != nil {
			return err
		}
		_, err := io.Copy(tw, r)
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
