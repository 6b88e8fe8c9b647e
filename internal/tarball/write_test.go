package tarball_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/outpost-dev/outpost/internal/tarball"
	"github.com/outpost-dev/outpost/internal/testutil"
)

func TestAddFSIsDeterministic(t *testing.T) {
	fsys := fstest.MapFS{
		"b/run.sh":    {Data: []byte("#!/bin/sh\n"), Mode: 0o750},
		"a.tf":        {Data: []byte("a"), Mode: 0o600},
		".git/HEAD":   {Data: []byte("ref")},
		"b/.DS_Store": {Data: []byte("x")},
	}
	skip := func(name string, dir bool) bool { return name == ".git" || name == "b/.DS_Store" }
	pack := func() []byte {
		var buf bytes.Buffer
		w, err := tarball.NewWriter(&buf, tarball.Format{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.AddFS(fsys, tarball.Tree{Prefix: "p", Dirs: true, Skip: skip}); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	first := pack()
	if !bytes.Equal(first, pack()) {
		t.Error("two packings differ")
	}
	zr, err := gzip.NewReader(bytes.NewReader(first))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	testutil.ReadTar(t, zr, func(h *tar.Header, _ string) {
		if h.ModTime.Unix() != 0 || h.Uid != 0 || h.Gid != 0 || h.Uname != "" {
			t.Errorf("%s: time %v, owner %d:%d %q", h.Name, h.ModTime, h.Uid, h.Gid, h.Uname)
		}
		got = append(got, fmt.Sprintf("%s %o", h.Name, h.Mode))
	})
	want := []string{"p/a.tf 644", "p/b/ 755", "p/b/run.sh 755"}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d: got %q, want %q", i, got[i], want[i])
		}
	}
}

func TestAddFSRefusesLinks(t *testing.T) {
	w, err := tarball.NewWriter(io.Discard, tarball.Format{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = w.AddFS(fstest.MapFS{"link": {Data: []byte("/etc"), Mode: fs.ModeSymlink}}, tarball.Tree{})
	if err == nil || !strings.Contains(err.Error(), "link: only regular files and directories can be archived") {
		t.Errorf("got %v", err)
	}
}
