package terraform

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
)

// Bounds of a module archive, so a bad one cannot fill the runner's disk.
const (
	maxModuleBytes = 512 << 20 // extracted
	maxModuleFiles = 20_000
)

// extractModule unpacks a gzipped tar archive of a module directory into
// dir. Only directories and regular files are accepted, at relative paths
// inside dir; file modes keep their executable bits.
func extractModule(archive []byte, dir string) error {
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		return fmt.Errorf("module: not a gzipped tar archive: %w", err)
	}
	defer zr.Close()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	var total int64
	files, rootTF := 0, false
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("module: reading the archive: %w", err)
		}
		name := path.Clean(strings.TrimPrefix(hdr.Name, "./"))
		if name == "." {
			continue
		}
		if path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return fmt.Errorf("module: %q: paths must stay inside the module directory", hdr.Name)
		}
		target := filepath.Join(dir, filepath.FromSlash(name))
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o700); err != nil {
				return err
			}
		case tar.TypeReg:
			files++
			total += hdr.Size
			if files > maxModuleFiles || total > maxModuleBytes {
				return fmt.Errorf("module: more than %d files or %d bytes", maxModuleFiles, maxModuleBytes)
			}
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
			_, err = io.Copy(f, io.LimitReader(tr, hdr.Size))
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("module: writing %s: %w", name, err)
			}
			if !strings.Contains(name, "/") && (strings.HasSuffix(name, ".tf") || strings.HasSuffix(name, ".tf.json")) {
				rootTF = true
			}
		case tar.TypeXGlobalHeader:
		default:
			return fmt.Errorf("module: %q: only directories and regular files are supported (type %q)", hdr.Name, hdr.Typeflag)
		}
	}
	if !rootTF {
		return errors.New("module: the archive holds no .tf or .tf.json file at its root")
	}
	return nil
}
