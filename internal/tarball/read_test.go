package tarball_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/internal/tarball"
	"github.com/outpost-dev/outpost/internal/testutil"
)

var limits = tarball.Limits{Files: 10, Bytes: 1 << 10}

type entry = testutil.TarEntry

func file(name, body string) entry {
	return entry{Header: tar.Header{Name: name, Mode: 0o644}, Body: body}
}

func special(name string, typ byte, link string) entry {
	return entry{Header: tar.Header{Name: name, Typeflag: typ, Linkname: link}}
}

func pack(t testing.TB, entries ...entry) []byte {
	return testutil.TarGzEntries(t, entries...)
}

// readAll reads an archive the way callers do: every entry and its body.
func readAll(archive []byte, lim tarball.Limits) (map[string]string, error) {
	r, err := tarball.NewReader(bytes.NewReader(archive), lim)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	got := map[string]string{}
	for {
		name, hdr, err := r.Next()
		if err == io.EOF {
			return got, nil
		}
		if err != nil {
			return got, err
		}
		body, err := io.ReadAll(r)
		if err != nil {
			return got, err
		}
		if hdr.Typeflag == tar.TypeDir {
			name += "/"
		}
		got[name] = string(body)
	}
}

func TestReadCleansPaths(t *testing.T) {
	got, err := readAll(pack(t, special("./", tar.TypeDir, ""), file("./a.tf", "a"), special("sub/", tar.TypeDir, ""),
		file("sub/../b.tf", "b"), file("sub/c.tf", "c")), limits)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a.tf": "a", "sub/": "", "b.tf": "b", "sub/c.tf": "c"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %q, want %q", k, got[k], v)
		}
	}
}

func TestReadRefuses(t *testing.T) {
	full := pack(t, file("a.tf", strings.Repeat("x", 600)), file("b.tf", strings.Repeat("y", 600)))
	for name, c := range map[string]struct {
		archive []byte
		want    error
		text    string
	}{
		"parent":          {pack(t, file("../evil.tf", "x")), tarball.ErrOutside, `"../evil.tf": paths must stay inside the directory`},
		"parent inside":   {pack(t, file("a/../../evil.tf", "x")), tarball.ErrOutside, "paths must stay inside"},
		"absolute":        {pack(t, file("/etc/passwd", "x")), tarball.ErrOutside, "paths must stay inside"},
		"file at root":    {pack(t, file(".", "x")), tarball.ErrOutside, "paths must stay inside"},
		"symlink":         {pack(t, special("link", tar.TypeSymlink, "/etc")), tarball.ErrNotRegular, `"link": only directories and regular files are supported (type '2')`},
		"inner symlink":   {pack(t, special("link", tar.TypeSymlink, "a.tf")), tarball.ErrNotRegular, "only directories and regular files"},
		"hard link":       {pack(t, file("a.tf", "x"), special("b.tf", tar.TypeLink, "a.tf")), tarball.ErrNotRegular, "only directories"},
		"device":          {pack(t, special("dev", tar.TypeChar, "")), tarball.ErrNotRegular, "only directories"},
		"block device":    {pack(t, special("disk", tar.TypeBlock, "")), tarball.ErrNotRegular, "only directories"},
		"fifo":            {pack(t, special("fifo", tar.TypeFifo, "")), tarball.ErrNotRegular, "only directories"},
		"not gzip":        {[]byte("main.tf"), tarball.ErrNotGzip, "not a gzipped tar archive"},
		"truncated":       {full[:len(full)/2], tarball.ErrTruncated, "the archive is truncated"},
		"too many bytes":  {full, nil, "more than 10 files or 1024 bytes"},
		"too many files":  {pack(t, file("1", ""), file("2", ""), file("3", ""), file("4", ""), file("5", ""), file("6", ""), file("7", ""), file("8", ""), file("9", ""), file("10", ""), file("11", "")), nil, "more than 10 files"},
		"bomb in headers": {pack(t, entry{Header: tar.Header{Name: "big", Size: 1 << 40}}), nil, "more than 10 files or 1024 bytes"},
	} {
		_, err := readAll(c.archive, limits)
		if err == nil || !strings.Contains(err.Error(), c.text) || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("%s: got %v, want %v saying %q", name, err, c.want, c.text)
		}
	}
}

func TestReadTooLargeIsALimitError(t *testing.T) {
	_, err := readAll(pack(t, file("a", strings.Repeat("x", 2000))), limits)
	var limit *tarball.LimitError
	if !errors.As(err, &limit) || limit.Limits.Bytes != limits.Bytes {
		t.Errorf("got %v, want a LimitError", err)
	}
}

func TestExtract(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	script := file("bin/run.sh", "#!/bin/sh\n")
	script.Header.Mode = 0o755
	if err := tarball.Extract(pack(t, special("./", tar.TypeDir, ""), file("main.tf", "m"), script), dir, limits); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "main.tf")); err != nil || string(b) != "m" {
		t.Errorf("main.tf: %q %v", b, err)
	}
	fi, err := os.Stat(filepath.Join(dir, "bin", "run.sh"))
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("run.sh: %v %v, want mode 0700", fi, err)
	}
	if err := tarball.Extract(pack(t, file("../x", "")), filepath.Join(t.TempDir(), "bad"), limits); !errors.Is(err, tarball.ErrOutside) {
		t.Errorf("escaping archive: %v", err)
	}
}

func TestHasRootFile(t *testing.T) {
	tf := func(name string) bool { return strings.HasSuffix(name, ".tf") }
	for archive, want := range map[string]bool{
		string(pack(t, file("./main.tf", ""))):                           true,
		string(pack(t, file("sub/main.tf", ""))):                         false,
		string(pack(t, special("x.tf", tar.TypeDir, ""), file("a", ""))): false,
	} {
		if got, err := tarball.HasRootFile([]byte(archive), limits, tf); err != nil || got != want {
			t.Errorf("got %v %v, want %v", got, err, want)
		}
	}
}
