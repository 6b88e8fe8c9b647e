package oci

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"

	"github.com/outpost-dev/outpost/internal/tarball"
)

// sourceLimits bound a source archive, so a bad one cannot fill the
// runner's disk.
var sourceLimits = tarball.Limits{Files: 20_000, Bytes: 512 << 20}

// hasRootFile reports whether the archive holds a file at its root for
// which match is true.
func hasRootFile(archive []byte, match func(name string) bool) (bool, error) {
	return tarball.HasRootFile(archive, sourceLimits, match)
}

// extractArchive unpacks the archive into dir.
func extractArchive(archive []byte, dir string) error {
	return tarball.Extract(archive, dir, sourceLimits)
}

// normaliseArchive rewrites a gzipped tar archive with every time zeroed,
// no owners and no gzip header time, keeping entries, names, modes, order
// and contents: the same files give the same bytes.
func normaliseArchive(archive []byte) ([]byte, error) {
	r, err := tarball.NewReader(bytes.NewReader(archive), sourceLimits)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var buf bytes.Buffer
	w, err := tarball.NewWriter(&buf, tarball.Format{}, nil)
	if err != nil {
		return nil, err
	}
	for {
		_, hdr, err := r.Next()
		switch {
		case errors.Is(err, io.EOF):
			if err := w.Close(); err != nil {
				return nil, err
			}
			return buf.Bytes(), nil
		case err != nil:
			return nil, err
		case hdr.Typeflag == tar.TypeDir:
			err = w.Dir(hdr.Name, hdr.Mode)
		default:
			err = w.File(hdr.Name, hdr.Mode, hdr.Size, r)
		}
		if err != nil {
			return nil, err
		}
	}
}
