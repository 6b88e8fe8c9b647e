package e2e

import (
	"strings"
	"testing"
)

// Bringing an install to a config version with the CLI: `deploy INSTALL`
// to the latest (version 2: cache changed, web removed), then
// `--config-version 1` back; the flags that do not go together are refused
// before any call, an unknown version by the API, naming it.
func TestCLIDeployConfigVersion(t *testing.T) {
	s, c := newCLIStack(t)
	dir := t.TempDir()
	copyDir(t, exampleDir, dir)
	c.ok(dir, "apps", "sync", ".", "--app", "demo")
	c.fails(1, `--label "tier": want key=value`, "installs", "create", "--app", "demo", "--name", "cust-x", "--label", "tier")
	c.fails(1, "labels.", "installs", "create", "--app", "demo", "--name", "cust-x", "--label", "bad key=x")
	c.createInstall(s, "cust-v", "--input", "db_password=pw", "--label", "env=test", "--label", "tier=gold")
	if out := c.ok("", "installs", "labels", "cust-v"); !strings.Contains(out, "env=test") || !strings.Contains(out, "tier=gold") {
		t.Fatalf("labels given at create:\n%s", out)
	}
	var listed struct{ Installs []struct{ Name string } }
	c.json("", &listed, "installs", "list")
	for _, i := range listed.Installs {
		if i.Name == "cust-x" {
			t.Fatalf("a refused create made an install: %+v", listed)
		}
	}
	c.ok("", "provision", "cust-v", "--wait")

	writeVersion2(t, dir)
	c.ok(dir, "apps", "sync", ".", "--app", "demo")
	c.fails(1, "--config-version brings the whole install to a version: leave out COMPONENT", "deploy", "cust-v", "api", "--config-version", "1")
	c.fails(1, "--with-dependents goes with a COMPONENT", "deploy", "cust-v", "--with-dependents")
	c.fails(1, "config_version", "deploy", "cust-v", "--config-version", "9")

	out := c.ok("", "deploy", "cust-v", "--wait")
	for _, line := range []string{"deploy_config op_", "cache: succeeded", "web: succeeded", "api: unchanged", "network: unchanged", " succeeded in "} {
		if !strings.Contains(out, line) {
			t.Fatalf("deploy --wait lacks %q:\n%s", line, out)
		}
	}
	var shown struct {
		Install struct {
			ConfigVersion int `json:"config_version"`
		} `json:"install"`
	}
	c.json("", &shown, "installs", "show", "cust-v")
	if shown.Install.ConfigVersion != 2 {
		t.Fatalf("after deploy: config version %d, want 2", shown.Install.ConfigVersion)
	}

	var back struct {
		Kind          string `json:"kind"`
		Status        string `json:"status"`
		ConfigVersion int    `json:"config_version"`
	}
	c.json("", &back, "deploy", "cust-v", "--config-version", "1", "--wait")
	if back.Kind != "deploy_config" || back.Status != "succeeded" || back.ConfigVersion != 1 {
		t.Fatalf("deploy --config-version 1: %+v", back)
	}
	c.json("", &shown, "installs", "show", "cust-v")
	if shown.Install.ConfigVersion != 1 {
		t.Fatalf("after the rollback: config version %d, want 1", shown.Install.ConfigVersion)
	}
}
