package filecopy

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFileCopiesBytesAndMode(t *testing.T) {
	dir := t.TempDir()
	from, to := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.WriteFile(from, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, []byte("an older, longer content"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := File(from, filepath.Join(dir, "c"), 0o750); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "c")); err != nil || fi.Mode().Perm() != 0o750&^umask(t) {
		t.Errorf("a new copy: %v, %v; want mode %v", fi, err, 0o750&^umask(t))
	}
	if err := File(from, to, 0o755); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(to); err != nil || string(b) != "hello" {
		t.Errorf("copy over an existing file: %q, %v; want hello", b, err)
	}
	if err := File(filepath.Join(dir, "missing"), to, 0o644); !os.IsNotExist(err) {
		t.Errorf("copy of a missing file: %v, want not exist", err)
	}
}

// umask is the process's umask, read by creating a file.
func umask(t *testing.T) os.FileMode {
	p := filepath.Join(t.TempDir(), "probe")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o777)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return 0o777 &^ fi.Mode().Perm()
}
