package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/registry"
)

// wantLines fails the test unless out holds every line.
func wantLines(t *testing.T, what, out string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(out, l) {
			t.Fatalf("%s lacks %q:\n%s", what, l, out)
		}
	}
}

// wantRow fails the test unless a line of the table out starts with the
// cells want, whatever their alignment.
func wantRow(t *testing.T, what, out string, want ...string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= len(want) && slices.Equal(f[:len(want)], want) {
			return
		}
	}
	t.Fatalf("%s lacks a row %q:\n%s", what, want, out)
}

// The vendor reads the app's config versions and compares two, then its
// builds: listed, shown, and started again (reused) with --wait.
func TestCLIConfigsAndBuilds(t *testing.T) {
	s, c := newCLIStack(t)
	c.ok(exampleDir, "apps", "sync", ".", "--app", "demo")
	changed := t.TempDir()
	copyDir(t, exampleDir, changed)
	toml := filepath.Join(changed, "outpost.toml")
	b, _ := os.ReadFile(toml)
	b = []byte(strings.Replace(string(b), `default = "eu-west-1"`, `default = "us-west-2"`, 1))
	if err := os.WriteFile(toml, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(changed, "modules", "cache", "main.tf")
	b, _ = os.ReadFile(cache)
	if err := os.WriteFile(cache, append(b, "# changed\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	wantLines(t, "sync of the changed config", c.ok(changed, "apps", "sync", ".", "--app", "demo"), "config version 2")

	var list struct{ Configs []struct{ Version int } }
	c.json("", &list, "configs", "list", "--app", "demo")
	if len(list.Configs) != 2 || list.Configs[0].Version != 2 {
		t.Fatalf("configs list: %+v", list)
	}
	shown := c.ok("", "configs", "show", "--app", "demo", "1")
	t.Logf("configs show 1:\n%s", shown)
	wantLines(t, "configs show 1", shown, "config version 1",
		`region: string, default "eu-west-1" — The region`, "db_password: string, required, sensitive",
		"web: helm_chart in components/web.toml, source charts/web, after ", "components/api.toml")
	var latest struct{ Version int }
	c.json("", &latest, "configs", "show", "--app", "demo")
	if latest.Version != 2 {
		t.Fatalf("configs show (latest): %+v", latest)
	}
	diff := c.ok("", "configs", "diff", "--app", "demo", "1", "2")
	t.Logf("configs diff 1 2:\n%s", diff)
	wantLines(t, "configs diff 1 2", diff,
		"--- demo version 1\n+++ demo version 2\n", `-  region: string, default "eu-west-1"`, `+  region: string, default "us-west-2"`,
		"-  cache: ", "+  cache: ")
	wantLines(t, "configs diff 2 latest", c.ok("", "configs", "diff", "--app", "demo", "2", "latest"), "no differences between versions 2 and 2")
	var diffed struct {
		From, To struct{ Version int }
		Diff     string
	}
	c.json("", &diffed, "configs", "diff", "--app", "demo", "1", "latest")
	if diffed.From.Version != 1 || diffed.To.Version != 2 || !strings.Contains(diffed.Diff, `+  region: string, default "us-west-2"`) {
		t.Fatalf("configs diff -o json: %+v", diffed)
	}
	c.fails(4, "app demo has no config version 9", "configs", "show", "--app", "demo", "9")
	c.fails(1, `"x" must be a version number`, "configs", "diff", "--app", "demo", "1", "x")
	c.fails(4, `no app "ghost"`, "configs", "list", "--app", "ghost")

	start := c.ok("", "builds", "start", "--app", "demo", "--component", "api", "--wait")
	wantLines(t, "builds start --wait", start, " of api reused\n", ": succeeded\n", "artifact ")
	var builds struct {
		Builds []struct{ ID, Component, Status string }
	}
	c.json("", &builds, "builds", "list", "--app", "demo", "--component", "api")
	if len(builds.Builds) != 1 || builds.Builds[0].Status != "succeeded" {
		t.Fatalf("builds of api: %+v", builds)
	}
	wantRow(t, "builds list", c.ok("", "builds", "list", "--app", "demo", "--config-version", "2"), builds.Builds[0].ID, "api", "succeeded", "1")
	wantLines(t, "builds show", c.ok("", "builds", "show", "--app", "demo", builds.Builds[0].ID),
		"build "+builds.Builds[0].ID+" of api (terraform_module), config version 1: succeeded\n", "digest: sha256:")
	c.fails(1, "web2", "builds", "start", "--app", "demo", "--component", "web2")
	c.fails(4, `app demo has no build "bld_0000000000000000"`, "builds", "show", "--app", "demo", "bld_0000000000000000")

	// A build that fails, of an image its registry lacks: exit code 6.
	public, err := registry.Start(context.Background(), registry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer public.Close()
	s.syncConfig(writeArtifactsApp(t, public.Addr()+"/library/missing:1.0"))
	c.fails(6, " of web failed: ", "builds", "start", "--app", "demo", "--component", "web", "--wait")
}

// The vendor looks at the install's runner, issues a registration token and
// the helm install line, manages API tokens, and deletes the install.
func TestCLIRunnersTokensDelete(t *testing.T) {
	s := newStack(t, stackOptions{})
	c := newCLI(t, s)
	old := s.startRunner("OUTPOST_TOKEN_FILE=" + filepath.Join(t.TempDir(), "token"))
	var runner struct{ ID, Status string }
	waitFor(t, time.Minute, "the runner online", func() bool {
		c.json("", &runner, "runners", "show", "--install", "customer-1")
		return runner.Status == "online"
	})
	wantRow(t, "runners list", c.ok("", "runners", "list"), s.runnerID, "install", s.install.ID, "online", "last", "seen")
	wantLines(t, "runners show", c.ok("", "runners", "show", s.runnerID), "runner "+s.runnerID+" (install runner, install "+s.install.ID+"): online, last seen ", "\nonline since ")
	wantLines(t, "runners token", c.ok("", "runners", "token", "customer-1"), "registration token (shown only now): ")
	c.fails(1, "one of the two", "runners", "token", "customer-1", "--build")
	c.fails(1, "one of the two", "runners", "token")

	// The org's build runner's token, from the CLI: a build runner registers with it.
	var build struct {
		Token string `json:"registration_token"`
	}
	c.json("", &build, "runners", "token", "--build")
	var runners struct {
		Runners []struct{ ID, Kind, Status string }
	}
	s.launchRunner("OUTPOST_TOKEN="+build.Token, "OUTPOST_TOKEN_FILE="+filepath.Join(t.TempDir(), "token"))
	waitFor(t, time.Minute, "the build runner online with the token from runners token --build", func() bool {
		c.json("", &runners, "runners", "list")
		for _, r := range runners.Runners {
			if r.Kind == "build" {
				return r.Status == "online"
			}
		}
		return false
	})
	helm := c.ok("", "runners", "helm-install", "customer-1", "--namespace", "team-a")
	t.Logf("runners helm-install:\n%s", helm)
	wantLines(t, "runners helm-install", helm,
		"helm install ", "--namespace team-a", "<TOKEN>", s.gw.URL)
	c.fails(1, "namespace", "runners", "helm-install", "customer-1", "--namespace", "Not_A_Label")
	c.fails(1, "one of the two", "runners", "show", s.runnerID, "--install", "customer-1")
	c.fails(4, `no runner "run_0000000000000000"`, "runners", "revoke-tokens", "run_0000000000000000")

	// Revoked, the runner registers again with a new registration token.
	var before, after struct {
		RegisteredAt time.Time `json:"registered_at"`
	}
	c.json("", &before, "runners", "show", s.runnerID)
	wantLines(t, "runners revoke-tokens", c.ok("", "runners", "revoke-tokens", s.runnerID), "every access token revoked")
	old.kill()
	var reg struct {
		Token string `json:"registration_token"`
	}
	c.json("", &reg, "runners", "token", "customer-1")
	s.launchRunner("OUTPOST_TOKEN="+reg.Token, "OUTPOST_TOKEN_FILE="+filepath.Join(t.TempDir(), "token"))
	waitFor(t, time.Minute, "the runner registered again", func() bool {
		c.json("", &after, "runners", "show", s.runnerID)
		return after.RegisteredAt.After(before.RegisteredAt)
	})

	var tok struct{ ID, Token string }
	c.json("", &tok, "tokens", "create", "--name", "ci")
	if !strings.HasPrefix(tok.Token, "opat_") {
		t.Fatalf("tokens create: %+v", tok)
	}
	list := c.ok("", "tokens", "list")
	if strings.Contains(list, tok.Token) {
		t.Fatalf("tokens list shows the token:\n%s", list)
	}
	wantRow(t, "tokens list", list, "ci", tok.ID)
	file := filepath.Join(t.TempDir(), "ci")
	os.WriteFile(file, []byte(tok.Token), 0o600)
	c.ok("", "context", "add", "ci", "--api", s.apiURL, "--token-file", file)
	c.ok("", "apps", "list", "--context", "ci")
	wantLines(t, "tokens revoke", c.ok("", "tokens", "revoke", tok.ID), "token ci ("+tok.ID+") revoked")
	c.fails(3, `refused the token of context "ci"`, "apps", "list", "--context", "ci")
	c.fails(4, `no token "tok_nope"`, "tokens", "revoke", "tok_nope")

	c.fails(1, "without --yes", "installs", "delete", "customer-1")
	c.fails(4, `no install "ghost"`, "installs", "delete", "ghost", "--yes")
	wantLines(t, "installs delete", c.ok("", "installs", "delete", "customer-1", "--yes"), "install customer-1 ("+s.install.ID+") deleted")
	c.fails(4, `no install "customer-1"`, "installs", "show", "customer-1")
}
