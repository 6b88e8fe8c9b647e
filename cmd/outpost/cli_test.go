package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/store/storetest"
)

// TestMain lets the tests run this package's test binary as the outpost
// command itself (OUTPOST_TEST_RUN_MAIN=1): its real exit code and output.
func TestMain(m *testing.M) {
	if os.Getenv("OUTPOST_TEST_RUN_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// outpost runs `outpost args...` in dir with env over an environment holding
// no OUTPOST_ variable nor DATABASE_URL.
func outpost(t *testing.T, dir string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), exe, args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OUTPOST_") && !strings.HasPrefix(kv, "DATABASE_URL=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(append(cmd.Env, "OUTPOST_TEST_RUN_MAIN=1"), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), errOut.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatalf("outpost %q: %v", args, err)
	}
	return out.String(), errOut.String(), 0
}

// A command's name in the usage (its title line "outpost — …" is none).
var commandName = regexp.MustCompile(`^[a-z][a-z-]*$`)

// A key-encryption key's text: base64 of 32 bytes.
var keyText = regexp.MustCompile(`[A-Za-z0-9+/]{43}=`)

// Every command of `outpost -h`'s list answers -h with its usage, exit 0, and
// does nothing else (kek generate prints no key).
func TestEveryCommandAnswersHelp(t *testing.T) {
	subcommands := map[string][]string{"kek": {"generate", "init", "status", "rotate"}, "org": {"create"}, "runner": {"publish", "keygen"},
		"signing-key": {"list", "rotate", "retire"}}
	var commands [][]string
	for _, line := range strings.Split(usage, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "outpost" || !commandName.MatchString(f[1]) {
			continue
		}
		commands = append(commands, []string{f[1], "-h"})
		for _, sub := range subcommands[f[1]] {
			commands = append(commands, []string{f[1], sub, "-h"})
		}
	}
	if len(commands) < 18 {
		t.Fatalf("only %d commands found in the usage:\n%s", len(commands), usage)
	}
	dir := t.TempDir()
	for _, args := range commands {
		stdout, stderr, code := outpost(t, dir, nil, args...)
		if code != 0 || !strings.Contains(strings.ToLower(stdout+stderr), "usage") || keyText.MatchString(stdout) {
			t.Errorf("outpost %s: exit %d, want 0 and its usage\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, stdout, stderr)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		t.Errorf("-h left %d files in the working directory (%s…)", len(entries), entries[0].Name())
	}
}

// Flags may follow a command's arguments: `outpost org create acme -data-dir X`.
func TestFlagsAfterTheOrgName(t *testing.T) {
	data := filepath.Join(t.TempDir(), "state")
	stdout, stderr, code := outpost(t, t.TempDir(), nil, "org", "create", "acme", "-data-dir", data)
	if code != 0 || !strings.HasPrefix(stdout, "opat_") || !strings.Contains(stderr, "created org acme") {
		t.Fatalf("outpost org create acme -data-dir X: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(data, "outpost.db")); err != nil {
		t.Errorf("the org went elsewhere than -data-dir: %v", err)
	}
	if _, stderr, code := outpost(t, t.TempDir(), nil, "org", "create", "acme", "beta", "-data-dir", data); code != 1 || !strings.Contains(stderr, "usage: outpost org create NAME") {
		t.Errorf("two names: exit %d, want 1 and the usage\n%s", code, stderr)
	}
}

// operating.md's "Running it for real" in order: migrate on PostgreSQL
// without a key stops and says how to make one; with the key made by
// `outpost kek init`, it migrates.
func TestMigrateWithoutAKeySaysHowToMakeOne(t *testing.T) {
	db := []string{"DATABASE_URL=" + storetest.NewPostgresDatabase(t)}
	_, stderr, code := outpost(t, t.TempDir(), db, "migrate")
	if code != 1 || !strings.Contains(stderr, "no key-encryption key") || !strings.Contains(stderr, "outpost kek init -kek-file") ||
		!strings.Contains(stderr, "outpost kek generate") {
		t.Fatalf("migrate without a key: exit %d, want 1 and how to make a key\n%s", code, stderr)
	}
	kek := filepath.Join(t.TempDir(), "kek")
	if _, stderr, code := outpost(t, t.TempDir(), nil, "kek", "init", "-kek-file", kek); code != 0 {
		t.Fatalf("kek init: exit %d\n%s", code, stderr)
	}
	stdout, stderr, code := outpost(t, t.TempDir(), append(db, "OUTPOST_KEK_FILE="+kek), "migrate")
	if code != 0 || !strings.Contains(stdout, "schema version") {
		t.Errorf("migrate with the key: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
}
