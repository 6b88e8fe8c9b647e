package main

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/internal/cliconfig"
)

// TestDevWritesTheCLIContext: outpostctl works against `outpost dev` with
// no flags.
func TestDevWritesTheCLIContext(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	path, _ := cliconfig.Path()
	if err := cliconfig.Write(path, cliconfig.Context{Name: "prod", API: "https://prod"}, true); err != nil {
		t.Fatal(err)
	}
	line := writeCLIContext(slog.Default(), "http://127.0.0.1:8080", "/data")
	conf, err := cliconfig.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	dev, ok := conf.Find("dev")
	if !ok || conf.Current != "dev" || len(conf.Contexts) != 2 || dev.API != "http://127.0.0.1:8080" ||
		dev.TokenFile != filepath.Join("/data", "admin-token") || !strings.Contains(line, "outpostctl") {
		t.Fatalf("config %+v, banner %q", conf, line)
	}
}
