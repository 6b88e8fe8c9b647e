package cliconfig

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteKeepsOtherContextsAndIsPrivate(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	path, err := Path()
	if err != nil {
		t.Fatal(err)
	}
	if c, err := Load(path); err != nil || len(c.Contexts) != 0 {
		t.Fatalf("a missing file: %+v, %v", c, err)
	}
	if err := Write(path, Context{Name: "prod", API: "https://prod", TokenFile: "/p"}, true); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, Context{Name: "dev", API: "http://a"}, false); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, Context{Name: "dev", API: "http://b"}, false); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	dev, ok := c.Find("dev")
	if c.Current != "prod" || len(c.Contexts) != 2 || !ok || dev.API != "http://b" {
		t.Fatalf("config %+v", c)
	}
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want %v", p, fi.Mode().Perm(), err, want)
		}
	}
}
