package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/internal/testutil"
)

// cli runs outpostctl, built once per test, with a config directory of its
// own.
type cli struct {
	t   testing.TB
	bin string
	env []string
}

func newCLI(t testing.TB, s *stack) *cli {
	t.Helper()
	c := &cli{t: t, bin: filepath.Join(testutil.Build(t, "../cmd/outpostctl"), "outpostctl"),
		env: []string{"PATH=" + os.Getenv("PATH"), "XDG_CONFIG_HOME=" + t.TempDir()}}
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte(s.token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.ok("", "context", "add", "e2e", "--api", s.apiURL, "--token-file", tok)
	return c
}

// newCLIStack is a stack with its build runner, and the CLI against it.
func newCLIStack(t *testing.T) (*stack, *cli) {
	s := newStack(t, stackOptions{})
	s.buildRunner = s.startBuildRunner()
	return s, newCLI(t, s)
}

// run runs the CLI in dir ("" for the test's) and returns its output and
// exit code.
func (c *cli) run(dir string, args ...string) (stdout, stderr string, code int) {
	c.t.Helper()
	cmd := exec.Command(c.bin, args...)
	cmd.Dir, cmd.Env = dir, c.env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		c.t.Fatal(err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

// ok runs the CLI, fails the test unless it exits 0, and is its stdout.
func (c *cli) ok(dir string, args ...string) string {
	c.t.Helper()
	stdout, stderr, code := c.run(dir, args...)
	if code != 0 {
		c.t.Fatalf("outpostctl %q: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, stdout, stderr)
	}
	return stdout
}

// json runs the CLI with -o json and decodes its stdout into out.
func (c *cli) json(dir string, out any, args ...string) {
	c.t.Helper()
	stdout := c.ok(dir, append(args, "-o", "json")...)
	if err := json.Unmarshal([]byte(stdout), out); err != nil {
		c.t.Fatalf("outpostctl %q -o json: %v\n%s", args, err, stdout)
	}
}

// fails runs the CLI, wanting exit code and a one-line stderr holding want.
func (c *cli) fails(code int, want string, args ...string) {
	c.t.Helper()
	_, stderr, got := c.run("", args...)
	if got != code || !strings.Contains(stderr, want) || strings.Count(stderr, "\n") != 1 {
		c.t.Errorf("outpostctl %q: exit %d, stderr %q; want %d and %q on one line", args, got, stderr, code, want)
	}
}

// The vendor's tour with the CLI alone: sync the example app from its
// directory, create an install with inputs from flags and a file, start its
// runner, provision with --wait, read the outputs, deprovision.
func TestCLIEndToEnd(t *testing.T) {
	s, c := newCLIStack(t)

	var created struct{ ID, Name string }
	c.json("", &created, "apps", "create", "shop", "--description", "a second app")
	var apps struct{ Apps []struct{ ID, Name string } }
	c.json("", &apps, "apps", "list")
	if len(apps.Apps) != 2 || created.Name != "shop" {
		t.Fatalf("apps %+v, created %+v", apps, created)
	}

	var synced struct {
		Version int  `json:"version"`
		Created bool `json:"created"`
	}
	c.json(exampleDir, &synced, "apps", "sync", ".", "--app", "demo")
	if synced.Version != 1 || !synced.Created {
		t.Fatalf("sync: %+v", synced)
	}

	inputs := filepath.Join(t.TempDir(), "inputs.yaml")
	if err := os.WriteFile(inputs, []byte("db_password: s3cret-from-a-file\nregion: us-east-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	inst := c.createInstall(s, "cust-a", "--input", "region=eu-central-1", "--input-file", inputs)

	out := c.ok("", "provision", "cust-a", "--wait")
	for _, line := range []string{"provision op_", "sandbox: succeeded", "web: succeeded", " succeeded in "} {
		if !strings.Contains(out, line) {
			t.Fatalf("provision --wait lacks %q:\n%s", line, out)
		}
	}
	c.checkShown(inst)
	c.checkInputsUpdate("cust-a")

	// A second operation while one runs is a conflict; the first goes on.
	var de struct{ ID string }
	c.json("", &de, "deprovision", "cust-a")
	c.fails(5, "conflict: ", "provision", "cust-a")
	if op := s.waitOp(inst, de.ID, 5*time.Minute); op.Status != "succeeded" {
		t.Fatalf("deprovision: %+v", op)
	}
}

// checkInputsUpdate changes a sensitive input of a provisioned demo
// install with `inputs set --apply --wait`: only the components it reaches
// are applied, the others end unchanged, and the value is never printed.
func (c *cli) checkInputsUpdate(install string) {
	c.t.Helper()
	c.fails(1, `nothing to change: give --input`, "inputs", "set", install)
	c.fails(1, `"nope"`, "inputs", "set", install, "--input", "nope=1")
	stdout, stderr, code := c.run("", "inputs", "set", install, "--input", "db_password=rotated-by-the-cli", "--apply", "--wait")
	if code != 0 {
		c.t.Fatalf("inputs set --apply --wait: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, line := range []string{"inputs version 2, set db_password", "update_inputs op_", "database: succeeded",
		"api: succeeded", "network: unchanged", "web: unchanged", " succeeded in "} {
		if !strings.Contains(stdout, line) {
			c.t.Fatalf("inputs set --apply --wait lacks %q:\n%s", line, stdout)
		}
	}
	var versions struct {
		Versions []struct {
			Version int      `json:"version"`
			Set     []string `json:"set"`
		} `json:"versions"`
	}
	c.json("", &versions, "inputs", "versions", install)
	if len(versions.Versions) != 2 || versions.Versions[0].Version != 2 || strings.Join(versions.Versions[0].Set, ",") != "db_password" {
		c.t.Fatalf("inputs versions: %+v", versions)
	}
	if all := stdout + stderr + c.ok("", "installs", "show", install, "-o", "json"); strings.Contains(all, "rotated-by-the-cli") {
		c.t.Fatal("the new db_password was printed")
	}
}

// createInstall creates an install of demo with the CLI (args: its
// inputs), starts its runner with the registration token the answer holds,
// and is the install's ID.
func (c *cli) createInstall(s *stack, name string, args ...string) string {
	c.t.Helper()
	var inst struct {
		ID     string `json:"id"`
		Runner struct {
			RegistrationToken string `json:"registration_token"`
		} `json:"runner"`
	}
	c.json("", &inst, append([]string{"installs", "create", "--app", "demo", "--name", name}, args...)...)
	s.stopSandboxRegistries(inst.ID)
	s.launchRunner("OUTPOST_TOKEN="+inst.Runner.RegistrationToken, "OUTPOST_TOKEN_FILE="+filepath.Join(c.t.TempDir(), "token"))
	return inst.ID
}

// checkShown reads the provisioned install through `installs show`.
func (c *cli) checkShown(id string) {
	c.t.Helper()
	var shown struct {
		Install struct {
			ID     string `json:"id"`
			Inputs []struct {
				Name      string  `json:"name"`
				Value     *string `json:"value"`
				Sensitive bool    `json:"sensitive"`
			} `json:"inputs"`
		} `json:"install"`
		Runner     struct{ Status string } `json:"runner"`
		Components struct {
			Components []struct{ Component string } `json:"components"`
		} `json:"components"`
		Outputs struct {
			Outputs map[string]map[string]struct {
				Value any `json:"value"`
			} `json:"outputs"`
		} `json:"outputs"`
	}
	c.json("", &shown, "installs", "show", "cust-a")
	if shown.Install.ID != id || shown.Runner.Status != "online" || len(shown.Components.Components) != 6 ||
		shown.Outputs.Outputs["sandbox"]["region"].Value != "eu-central-1" {
		c.t.Fatalf("installs show: %+v", shown)
	}
	for _, in := range shown.Install.Inputs {
		if in.Name == "db_password" && (!in.Sensitive || in.Value != nil) {
			c.t.Fatalf("db_password is not sensitive: %+v", in)
		}
	}
	text := c.ok("", "installs", "show", "cust-a")
	for _, want := range []string{"db_password = (sensitive)", ": online, last seen ", "  web  build bld_",
		`sandbox.region = "eu-central-1"`, "database.url = (sensitive)"} {
		if strings.Contains(text, "s3cret") || !strings.Contains(text, want) {
			c.t.Fatalf("installs show lacks %q or shows the password:\n%s", want, text)
		}
	}
}

// Bad input: each mistake a clear message and a non-zero exit, and nothing
// stored changes.
func TestCLIBadInput(t *testing.T) {
	s := newStack(t, stackOptions{})
	c := newCLI(t, s)
	bad := t.TempDir()
	files := map[string]string{
		"outpost.toml":      "[app]\nname = \"broken\"\n\n[sandbox]\nsource = \"nowhere\"\n\n[[inputs]]\nname = \"size\"\ntype = \"colour\"\n",
		"components/a.toml": "name = \"a\"\ntype = \"nonsense\"\ndependencies = [\"ghost\"]\n",
	}
	for name, content := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(bad, name)), 0o755)
		if err := os.WriteFile(filepath.Join(bad, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stdout, stderr, code := c.run(bad, "apps", "sync", ".", "--app", "demo")
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if code != 1 || len(lines) < 4 || stdout != "" {
		t.Fatalf("sync of a bad config: exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	for _, l := range lines[:len(lines)-1] {
		if !strings.HasPrefix(l, "outpost.toml:") && !strings.HasPrefix(l, "components/a.toml:") {
			t.Errorf("problem %q is not file:key: message", l)
		}
	}
	t.Logf("problems:\n%s", stderr)
	var configs struct{ Configs []any }
	if code := s.do("GET", "/v1/apps/"+s.install.AppID+"/configs", nil, &configs); code != http.StatusOK || len(configs.Configs) != 0 {
		t.Fatalf("configs after a refused sync: %d %+v", code, configs)
	}

	c.fails(1, "unknown flag: --colour", "apps", "list", "--colour")
	c.fails(1, `--input "region": want name=value`, "installs", "create", "--app", "demo", "--name", "x", "--input", "region")
	c.fails(4, `no app "ghost"`, "installs", "create", "--app", "ghost", "--name", "x")
	c.fails(4, `no install "ins_nope"`, "provision", "ins_nope")
	c.fails(1, `no context "prod"`, "apps", "list", "--context", "prod")
	var installs struct{ Installs []any }
	c.json("", &installs, "installs", "list")
	if len(installs.Installs) != 1 {
		t.Fatalf("installs after bad input: %+v", installs)
	}

	wrong := filepath.Join(t.TempDir(), "wrong")
	os.WriteFile(wrong, []byte("opat_wrong\n"), 0o600)
	c.ok("", "context", "add", "wrong", "--api", s.apiURL, "--token-file", wrong)
	c.fails(3, `refused the token of context "wrong"`, "apps", "list", "--context", "wrong")
	s.api.Close()
	c.fails(2, "cannot reach the API at "+s.apiURL, "apps", "list")
}
