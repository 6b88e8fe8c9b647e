// Package configarchive packs an app config directory as the gzipped tar the
// API takes: what appconfig.ArchiveDir does, in a package that links only
// the standard library and internal/tarball, so that outpostctl packs a
// directory exactly as the control plane does without appconfig's parsers
// (whose initialisation cost the CLI ~17 ms a start; docs/architecture/cli.md).
package configarchive

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"github.com/outpost-dev/outpost/internal/tarball"
)

// Skipped reports whether a file or directory is left out of archives:
// terraform's working data and state, VCS data, macOS metadata.
func Skipped(name string, dir bool) bool {
	base := path.Base(name)
	if dir {
		return base == ".terraform" || base == ".git" || base == "__MACOSX"
	}
	return strings.HasPrefix(base, "._") || base == ".DS_Store" ||
		strings.HasSuffix(base, ".tfstate") || strings.HasSuffix(base, ".tfstate.backup")
}

// format is the format of config archives. A build's key is the digest of
// its packed source: changing this changes every key.
var format = tarball.Format{Tar: tar.FormatPAX, Level: gzip.BestCompression}

// Pack is appconfig.ArchiveDir (see there); the uncompressed tar stream is
// also written to tarCopy, when it is not nil.
func Pack(fsys fs.FS, dir string, tarCopy io.Writer) ([]byte, error) {
	if dir != "." {
		sub, err := fs.Sub(fsys, dir)
		if err != nil {
			return nil, fmt.Errorf("appconfig: archive %s: %w", dir, err)
		}
		fsys = sub
	}
	var buf bytes.Buffer
	w, err := tarball.NewWriter(&buf, format, tarCopy)
	if err != nil {
		return nil, err
	}
	err = w.AddFS(fsys, tarball.Tree{Dirs: true, Skip: Skipped})
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("appconfig: archive %s: %w", dir, err)
	}
	return buf.Bytes(), nil
}
