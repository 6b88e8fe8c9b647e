package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/localcluster"
)

// printed is what a kubeTools printed to its file.
func printed(t *testing.T, f *os.File) string {
	raw, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// newKubeTest is a kubeTools in a fresh working directory with no etcd or
// kube-apiserver, its tools log holding lines.
func newKubeTest(t *testing.T, lines string) (kubeTools, *os.File) {
	t.Setenv(localcluster.EnvAssets, "")
	dir := t.TempDir()
	t.Chdir(dir)
	out, err := os.Create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { out.Close() })
	k := kubeTools{toolsLog: filepath.Join(dir, "tools.log"), out: out, every: time.Hour}
	if err := os.WriteFile(k.toolsLog, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	return k, out
}

// While the background build runs, dev says so, gives its runners the
// directory the binaries will be in, and waits until they are there.
func TestKubeToolsWaitForTheBackgroundBuild(t *testing.T) {
	k, out := newKubeTest(t, "tools: no etcd/kube-apiserver found: building …\n")
	if !k.building() {
		t.Fatal("building: false while the log shows a build")
	}
	dir := k.dir()
	if want, _ := filepath.Abs(localcluster.AssetsPath); dir != want {
		t.Fatalf("dir %q, want %q", dir, want)
	}
	done := make(chan error, 1)
	go func() { done <- k.wait(context.Background()) }()
	for !strings.Contains(printed(t, out), "kube-apiserver: building (see "+k.toolsLog) {
		time.Sleep(50 * time.Millisecond)
	}
	for _, b := range localcluster.Binaries {
		if err := os.WriteFile(filepath.Join(dir, b), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case err := <-done:
		if err != nil || !strings.Contains(printed(t, out), "kube-apiserver: ready after") {
			t.Errorf("wait: %v; printed:\n%s", err, printed(t, out))
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("wait did not return once the binaries were there; printed:\n%s", printed(t, out))
	}
}

func TestKubeToolsFailedBuild(t *testing.T) {
	k, _ := newKubeTest(t, "tools: building …\ntools: kube failed (exit 1)\n")
	if k.building() || k.dir() != "" {
		t.Fatalf("a failed build: building %v, dir %q", k.building(), k.dir())
	}
	if err := k.wait(context.Background()); err == nil || !strings.Contains(err.Error(), k.toolsLog) {
		t.Errorf("wait after a failed build: %v, want an error naming %s", err, k.toolsLog)
	}
}
