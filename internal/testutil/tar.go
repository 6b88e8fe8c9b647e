package testutil

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"maps"
	"slices"
	"testing"
)

// TarGz packs files (name → content) as a gzipped tar of regular files,
// mode 0644, in name order. Names are written as given, "../x" included.
func TarGz(t testing.TB, files map[string]string) []byte {
	t.Helper()
	var entries []TarEntry
	for _, name := range slices.Sorted(maps.Keys(files)) {
		entries = append(entries, TarEntry{Header: tar.Header{Name: name, Mode: 0o644}, Body: files[name]})
	}
	return TarGzEntries(t, entries...)
}

// TarEntry is an entry of TarGzEntries: a header as given and, for a
// regular file, its body.
type TarEntry struct {
	Header tar.Header
	Body   string
}

// TarGzEntries packs the entries as a gzipped tar. A header without a
// type is a regular file, whose size is its body's, unless the header says
// more: then the stream is cut short there (a bomb's header, a truncated
// archive). A header without a mode has 0644.
func TarGzEntries(t testing.TB, entries ...TarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	short := false
	for _, e := range entries {
		h := e.Header
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Typeflag == tar.TypeReg && h.Size < int64(len(e.Body)) {
			h.Size = int64(len(e.Body))
		}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		short = h.Size > int64(len(e.Body))
		if _, err := tw.Write([]byte(e.Body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil && !short {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// ReadTar calls each with every entry of the tar r and its body, in order.
func ReadTar(t testing.TB, r io.Reader, each func(h *tar.Header, body string)) {
	t.Helper()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		each(h, string(body))
	}
}
