package appconfig

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/internal/testutil"
)

// writeTree writes files (path → content) under dir; a path ending in "*"
// is written executable (without the star).
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		mode := os.FileMode(0o644)
		if strings.HasSuffix(name, "*") {
			name, mode = strings.TrimSuffix(name, "*"), 0o755
		}
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
}

type entry struct {
	Name    string
	Mode    int64
	ModTime time.Time
	Uid     int
	Body    string
}

func entries(t *testing.T, archive []byte) []entry {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	if !gz.ModTime.IsZero() || gz.Name != "" {
		t.Errorf("gzip header has a time or name: %v %q", gz.ModTime, gz.Name)
	}
	var out []entry
	testutil.ReadTar(t, gz, func(h *tar.Header, body string) {
		out = append(out, entry{h.Name, h.Mode, h.ModTime, h.Uid, body})
	})
	return out
}

func TestArchiveDirIsDeterministic(t *testing.T) {
	files := map[string]string{
		"main.tf":                     "output \"x\" { value = 1 }\n",
		"b/vars.tf":                   "variable \"v\" {}\n",
		"a/run.sh*":                   "#!/bin/sh\necho hi\n",
		".terraform/providers/x":      "cached provider",
		"terraform.tfstate":           "{}",
		"terraform.tfstate.backup":    "{}",
		".terraform.lock.hcl":         "# lock\n",
		"nested/.terraform/modules/y": "cached module",
	}
	dir1, dir2 := t.TempDir(), t.TempDir()
	writeTree(t, dir1, files)
	writeTree(t, dir2, files)
	// Different times, so only the contents can make the archives equal.
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	filepath.Walk(dir2, func(p string, _ os.FileInfo, _ error) error { return os.Chtimes(p, old, old) })

	a1, err := ArchiveDir(os.DirFS(dir1), ".")
	if err != nil {
		t.Fatal(err)
	}
	a2, err := ArchiveDir(os.DirFS(dir2), ".")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a1, a2) {
		t.Fatal("the same files archive to different bytes")
	}
	got := entries(t, a1)
	want := []entry{
		{".terraform.lock.hcl", 0o644, time.Unix(0, 0), 0, "# lock\n"},
		{"a/", 0o755, time.Unix(0, 0), 0, ""},
		{"a/run.sh", 0o755, time.Unix(0, 0), 0, "#!/bin/sh\necho hi\n"},
		{"b/", 0o755, time.Unix(0, 0), 0, ""},
		{"b/vars.tf", 0o644, time.Unix(0, 0), 0, "variable \"v\" {}\n"},
		{"main.tf", 0o644, time.Unix(0, 0), 0, "output \"x\" { value = 1 }\n"},
		{"nested/", 0o755, time.Unix(0, 0), 0, ""},
	}
	for i := range got {
		got[i].ModTime = got[i].ModTime.UTC()
		want[i].ModTime = want[i].ModTime.UTC()
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("entries:\n got %+v\nwant %+v", got, want)
	}

	// A subdirectory archives with paths relative to it; a change in
	// content changes the bytes.
	sub, err := ArchiveDir(os.DirFS(dir1), "b")
	if err != nil {
		t.Fatal(err)
	}
	if e := entries(t, sub); len(e) != 1 || e[0].Name != "vars.tf" {
		t.Errorf("archive of b = %+v", e)
	}
	writeTree(t, dir2, map[string]string{"main.tf": "output \"x\" { value = 2 }\n"})
	if a3, _ := ArchiveDir(os.DirFS(dir2), "."); bytes.Equal(a1, a3) {
		t.Error("a changed file archives to the same bytes")
	}

	// A symlink is refused rather than followed or dropped.
	if err := os.Symlink("/etc/passwd", filepath.Join(dir1, "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := ArchiveDir(os.DirFS(dir1), "."); err == nil || !strings.Contains(err.Error(), "link") {
		t.Errorf("archive with a symlink: %v", err)
	}
}

// tarEntries builds a gzipped tar from headers and bodies.
func tarEntries(t *testing.T, entries ...any) []byte {
	t.Helper()
	var es []testutil.TarEntry
	for i := 0; i < len(entries); i += 2 {
		es = append(es, testutil.TarEntry{Header: *entries[i].(*tar.Header), Body: entries[i+1].(string)})
	}
	return testutil.TarGzEntries(t, es...)
}

func TestReadArchive(t *testing.T) {
	// A top-level directory holding the config becomes the root; "./"
	// prefixes and skipped files go.
	data := tarEntries(t,
		&tar.Header{Name: "./demo/", Typeflag: tar.TypeDir}, "",
		&tar.Header{Name: "./demo/outpost.toml"}, "[app]\n",
		&tar.Header{Name: "./demo/sandbox/main.tf"}, "# tf\n",
		&tar.Header{Name: "./demo/sandbox/.terraform/x"}, "cache",
		&tar.Header{Name: "./demo/._outpost.toml"}, "macOS junk",
	)
	fsys, err := ReadArchive(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if !d.IsDir() {
			names = append(names, p)
		}
		return nil
	})
	if !reflect.DeepEqual(names, []string{"outpost.toml", "sandbox/main.tf"}) {
		t.Errorf("files = %v", names)
	}

	for name, bad := range map[string][]byte{
		"not gzip":   []byte("plain text"),
		"escapes":    tarEntries(t, &tar.Header{Name: "../evil.tf"}, "x"),
		"absolute":   tarEntries(t, &tar.Header{Name: "/etc/evil"}, "x"),
		"symlink":    tarEntries(t, &tar.Header{Name: "link", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}, ""),
		"empty":      tarEntries(t),
		"duplicated": tarEntries(t, &tar.Header{Name: "a"}, "1", &tar.Header{Name: "./a"}, "2"),
	} {
		if _, err := ReadArchive(bytes.NewReader(bad)); !errors.Is(err, ErrArchive) {
			t.Errorf("%s: got %v, want ErrArchive", name, err)
		}
	}
}

func TestReadArchiveLimits(t *testing.T) {
	big := tarEntries(t, &tar.Header{Name: "outpost.toml"}, strings.Repeat("\x00", MaxArchiveBytes+1))
	if _, err := ReadArchive(bytes.NewReader(big)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("%d bytes uncompressed: %v", MaxArchiveBytes+1, err)
	}
	var set FileSet
	var err error
	for i := 0; i <= MaxArchiveFiles && err == nil; i++ {
		err = set.Add(fmt.Sprintf("f%d", i), nil, 0o644)
	}
	if !errors.Is(err, ErrTooLarge) || !errors.Is(err, ErrArchive) {
		t.Errorf("%d files: %v", MaxArchiveFiles+1, err)
	}
}

// TestArchiveRoundTrip: a config archived and read back loads the same, and
// archives to the same bytes again.
func TestArchiveRoundTrip(t *testing.T) {
	c := load(t, base())
	data, err := c.Archive()
	if err != nil {
		t.Fatal(err)
	}
	back, err := FromArchive(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Files(), c.Files()) || !reflect.DeepEqual(back.Graph(), c.Graph()) {
		t.Errorf("round trip: files %v graph %v, want %v %v", back.Files(), back.Graph(), c.Files(), c.Graph())
	}
	again, err := back.Archive()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, again) {
		t.Error("archiving the read-back config gives other bytes")
	}
	mod, err := back.ModuleArchive("modules/web")
	if err != nil {
		t.Fatal(err)
	}
	if e := entries(t, mod); len(e) != 1 || e[0].Name != "main.tf" || !strings.Contains(e[0].Body, "db_host") {
		t.Errorf("module archive = %+v", e)
	}
}
