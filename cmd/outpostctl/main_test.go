package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/internal/cliconfig"
	"github.com/outpost-dev/outpost/internal/testutil"
)

// TestCLIDoesNotLinkTheControlPlane keeps the CLI small and quick to start:
// it talks to the API, and links none of what serves it.
func TestCLIDoesNotLinkTheControlPlane(t *testing.T) {
	testutil.CheckDeps(t, "outpostctl", "github.com/outpost-dev/outpost/apiclient", append(testutil.ControlPlane,
		"github.com/outpost-dev/outpost/runner",
		"helm.sh/",
		"k8s.io/",
		"sigs.k8s.io/",
		// appconfig's parsers, ~17 ms of initialisation a start: the CLI packs
		// a config with appconfig/configarchive, and the API validates it.
		"github.com/hashicorp/hcl/",
		"github.com/zclconf/go-cty/",
	))
}

// outpostctl runs the CLI in-process with its own config directory.
func outpostctl(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return out.String(), errOut.String(), code
}

// mustRunner runs outpostctl, failing the test unless it exits 0, and
// answers its stdout.
func mustRunner(t *testing.T) func(args ...string) string {
	return func(args ...string) string {
		t.Helper()
		out, stderr, code := outpostctl(t, args...)
		if code != 0 {
			t.Fatalf("%q: exit %d %s", args, code, stderr)
		}
		return out
	}
}

func TestContextsNeverShowTheToken(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("opat_secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"context", "add", "a", "--api", "http://127.0.0.1:1", "--token-file", tok},
		{"context", "add", "b", "--api", "https://outpost.example"},
		{"context", "use", "b"},
	} {
		if _, stderr, code := outpostctl(t, args...); code != 0 {
			t.Fatalf("%q: exit %d %s", args, code, stderr)
		}
	}
	for _, o := range []string{"text", "json"} {
		stdout, _, code := outpostctl(t, "context", "list", "-o", o)
		if code != 0 || strings.Contains(stdout, "opat_secret") || !strings.Contains(stdout, tok) ||
			!strings.Contains(stdout, "https://outpost.example") {
			t.Errorf("context list -o %s: exit %d\n%s", o, code, stdout)
		}
	}
	path, _ := cliconfig.Path()
	conf, err := cliconfig.Load(path)
	if err != nil || conf.Current != "b" || len(conf.Contexts) != 2 {
		t.Fatalf("config %+v %v", conf, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("config mode %v %v", fi.Mode().Perm(), err)
	}
}

// TestBadUsageIsNamed: each mistake is one line naming what to do, exit 1
// (usage) or 2 (an API that is down).
func TestBadUsageIsNamed(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("OUTPOST_CONTEXT", "")
	t.Setenv("OUTPOST_TOKEN", "opat_x")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"apps", "list"}, exitUsage, "no context: run `outpostctl context add"},
		{[]string{"apps", "list", "--colour"}, exitUsage, "unknown flag: --colour"},
		{[]string{"launch"}, exitUsage, `unknown command "launch"`},
		{[]string{"apps", "list", "-o", "yaml"}, exitUsage, "want text or json"},
		{[]string{"context", "add", "x", "--api", "ftp://h"}, exitUsage, "want an http(s) URL"},
		{[]string{"context", "use", "nope"}, exitUsage, `no context "nope"`},
		{[]string{"installs", "create", "--app", "a", "--name", "n", "--input", "region"}, exitUsage, `--input "region": want name=value`},
		{[]string{"installs", "create", "--app", "a", "--name", "n", "--input-file", "/nonexistent"}, exitUsage, "--input-file"},
		{[]string{"configs", "show", "1"}, exitUsage, `required flag(s) "app" not set`},
		{[]string{"configs", "diff", "--app", "a", "1"}, exitUsage, "accepts 2 arg(s), received 1"},
		{[]string{"builds", "start", "--app", "a"}, exitUsage, `required flag(s) "component" not set`},
		{[]string{"runners", "show"}, exitUsage, "name the runner by its ID or by --install INSTALL"},
		{[]string{"tokens", "create"}, exitUsage, `required flag(s) "name" not set`},
		// cobra's own checks before a command's: the missing flag is named.
		{[]string{"releases", "create", "--app", "a"}, exitUsage, "at least one of the flags in the group [all install selector] is required"},
		{[]string{"installs", "create", "--input", "bad"}, exitUsage, `required flag(s) "app", "name" not set`},
		{[]string{"apps", "sync", "x"}, exitUsage, `required flag(s) "app" not set`},
		{[]string{"context", "add", "down", "--api", "http://127.0.0.1:1"}, exitOK, ""},
		{[]string{"apps", "list"}, exitUnreachable, `cannot reach the API at http://127.0.0.1:1 (context "down")`},
		{[]string{"installs", "show", "x", "--context", "other"}, exitUsage, `no context "other"`},
	} {
		_, stderr, code := outpostctl(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") > 1 {
			t.Errorf("outpostctl %q: exit %d, stderr %q; want %d and %q on one line", tc.args, code, stderr, tc.code, tc.want)
		}
	}
}

func TestHelpListsExitCodes(t *testing.T) {
	stdout, _, code := outpostctl(t, "--help")
	if code != 0 || !strings.Contains(stdout, "Exit codes:") || !strings.Contains(stdout, "6  a waited-for operation") {
		t.Errorf("--help: exit %d\n%s", code, stdout)
	}
}
