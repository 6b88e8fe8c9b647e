package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/store/seal"
)

// outpost kek init makes the key file once (a new key, or OUTPOST_KEK's),
// keeps it on every later run, and refuses, keeping the file, when
// OUTPOST_KEK names another key.
func TestKEKInitMakesTheFileOnceAndKeepsIt(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	file := filepath.Join(t.TempDir(), "keys", "kek")
	kekInit := func(extra ...string) error {
		return runKEK(t.Context(), append([]string{"init", "-kek-file", file}, extra...), log)
	}
	if err := kekInit(); err != nil {
		t.Fatalf("first run: %v", err)
	}
	made, err := seal.LoadLocalKey(file)
	if err != nil {
		t.Fatalf("the key made: %v", err)
	}
	if st, _ := os.Stat(file); st.Mode().Perm() != 0o600 {
		t.Errorf("the key file's mode is %v, want 0600", st.Mode().Perm())
	}
	before, _ := os.ReadFile(file)
	if err := kekInit(); err != nil {
		t.Fatalf("second run: %v", err)
	}
	if err := kekInit("-kek", strings.TrimSpace(string(before))); err != nil {
		t.Fatalf("run with the same key as -kek: %v", err)
	}
	other := seal.GenerateKeyText()
	if err := kekInit("-kek", other); err == nil || !strings.Contains(err.Error(), made.ID()) || !strings.Contains(err.Error(), "rotate") {
		t.Errorf("run with another key as -kek: %v; want an error naming %s and a rotation", err, made.ID())
	}
	if after, _ := os.ReadFile(file); string(after) != string(before) {
		t.Errorf("the key file changed: %q, was %q", after, before)
	}
	if err := kekInit("-kek", "not base64"); err == nil || !strings.Contains(err.Error(), "-kek (OUTPOST_KEK)") {
		t.Errorf("a bad -kek: %v; want an error naming -kek (OUTPOST_KEK)", err)
	}

	given := filepath.Join(t.TempDir(), "kek")
	if err := runKEK(t.Context(), []string{"init", "-kek-file", given, "-kek", other}, log); err != nil {
		t.Fatalf("init with -kek: %v", err)
	}
	want, _ := seal.ParseLocalKey(other)
	if got, err := seal.LoadLocalKey(given); err != nil || got.ID() != want.ID() {
		t.Errorf("the file made from -kek holds %v (%v), want %s", got, err, want.ID())
	}
	if err := runKEK(t.Context(), []string{"init"}, log); err == nil || !strings.Contains(err.Error(), "-kek-file") {
		t.Errorf("init without -kek-file: %v; want an error naming -kek-file", err)
	}
}
