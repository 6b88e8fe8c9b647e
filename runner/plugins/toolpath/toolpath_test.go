package toolpath

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInParentsFindsTheNearest(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "repo", "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	tool := filepath.Join(".tools", "x", "bin")
	for _, dir := range []string{root, filepath.Join(root, "repo")} {
		p := filepath.Join(dir, tool)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	isExe := func(p string) bool { return Executable(p) == nil }

	got, ok, err := InParents(deep, tool, isExe)
	if want := filepath.Join(root, "repo", tool); err != nil || !ok || got != want {
		t.Errorf("from %s: %q %v %v; want %q", deep, got, ok, err, want)
	}
	if _, ok, err := InParents(deep, filepath.Join(".tools", "missing"), isExe); ok || err != nil {
		t.Errorf("a missing tool was found (%v, %v)", ok, err)
	}
	if _, ok, _ := InParents("", tool, isExe); ok {
		t.Error("an empty directory found a tool")
	}
}

func TestExecutableSaysWhy(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		dir:                          "is a directory",
		plain:                        "permission denied",
		filepath.Join(dir, "absent"): "no such file or directory",
	} {
		if err := Executable(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Executable(%s) = %v; want %q", path, err, want)
		}
	}
}
