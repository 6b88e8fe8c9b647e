package tarball

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Extract unpacks the gzipped tar archive into dir, which it creates.
// Directories are 0700; files 0700 when the archive gives them an
// executable bit, else 0600.
func Extract(archive []byte, dir string, lim Limits) error {
	r, err := NewReader(bytes.NewReader(archive), lim)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for {
		name, hdr, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(name))
		if hdr.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(target, 0o700); err != nil {
				return err
			}
			continue
		}
		if err := writeFile(target, hdr, r); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
}

func writeFile(target string, hdr *tar.Header, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		return err
	}
	mode := os.FileMode(0o600)
	if hdr.FileInfo().Mode()&0o111 != 0 {
		mode = 0o700
	}
	f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// HasRootFile reports whether the archive holds a regular file at its root
// for which match is true; an archive a Reader refuses is an error.
func HasRootFile(archive []byte, lim Limits, match func(name string) bool) (bool, error) {
	r, err := NewReader(bytes.NewReader(archive), lim)
	if err != nil {
		return false, err
	}
	defer r.Close()
	found := false
	for {
		name, hdr, err := r.Next()
		if errors.Is(err, io.EOF) {
			return found, nil
		}
		if err != nil {
			return false, err
		}
		found = found || (hdr.Typeflag == tar.TypeReg && !strings.Contains(name, "/") && match(name))
	}
}
