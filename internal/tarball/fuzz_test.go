package tarball_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/internal/tarball"
)

// FuzzRead reads any bytes as an archive: whatever a Reader yields is a
// directory or a regular file at a clean path inside the root, within the
// limits, and Extract writes nothing outside its directory. The seeds in
// testdata/fuzz/FuzzRead are archives that escape, link, hold devices and
// fifos, are bombs, or are cut short.
func FuzzRead(f *testing.F) {
	f.Add(pack(f, special("./", tar.TypeDir, ""), file("main.tf", "m"), file("sub/x", "x")))
	f.Fuzz(func(t *testing.T, archive []byte) {
		r, err := tarball.NewReader(bytes.NewReader(archive), limits)
		if err != nil {
			return
		}
		defer r.Close()
		var total int64
		for {
			name, hdr, err := r.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) && err.Error() == "" {
					t.Fatal("an error without a message")
				}
				break
			}
			if name != path.Clean(name) || path.IsAbs(name) || name == "." || name == ".." || strings.HasPrefix(name, "../") {
				t.Fatalf("unsafe name %q (header %q)", name, hdr.Name)
			}
			if hdr.Typeflag != tar.TypeDir && hdr.Typeflag != tar.TypeReg {
				t.Fatalf("%q: type %q", name, hdr.Typeflag)
			}
			n, _ := io.Copy(io.Discard, r)
			if total += n; total > limits.Bytes {
				t.Fatalf("read %d bytes, past the limit", total)
			}
		}
		parent := t.TempDir()
		_ = tarball.Extract(archive, filepath.Join(parent, "out"), limits)
		entries, err := os.ReadDir(parent)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Name() != "out" {
				t.Fatalf("Extract wrote %s outside its directory", e.Name())
			}
		}
	})
}
