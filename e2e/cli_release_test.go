package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// A release with the CLI: labels set with `installs labels`, `releases
// create --selector … --wait` halts on the install whose input fails
// version 2 (exit 6, naming it), `releases resume --wait` after the input
// is fixed, `releases rollback --wait` brings every install back to
// version 1. Bad flags are refused before any call, bad values by the API,
// naming the field.
func TestCLIRelease(t *testing.T) {
	s, c := newCLIStack(t)
	dir := t.TempDir()
	copyDir(t, "testdata/release-app", dir)
	copyFile(t, installRegistryTF, filepath.Join(dir, "sandbox", "install_registry.tf"))
	c.ok(dir, "apps", "sync", ".", "--app", "demo")
	for _, name := range []string{"cust-a", "cust-b", "cust-c"} {
		mode := map[bool]string{true: "fail", false: "ok"}[name == "cust-b"]
		c.createInstall(s, name, "--input", "mode="+mode)
		c.ok("", "provision", name, "--wait")
		if out := c.ok("", "installs", "labels", name, "env=prod", "tier=free", "canary=yes"); !strings.Contains(out, "env=prod\n") {
			t.Fatalf("labels of %s:\n%s", name, out)
		}
		if out := c.ok("", "installs", "labels", name, "tier-", "canary-"); out != "env=prod\n" {
			t.Fatalf("labels of %s after removing two:\n%s", name, out)
		}
	}
	c.fails(1, "set.env", "installs", "labels", "cust-a", "env=not ok!")
	c.fails(1, "key=value to set a label, key- to remove one", "installs", "labels", "cust-a", "junk")

	copyFile(t, "testdata/release-v2/main.tf", filepath.Join(dir, "modules", "second", "main.tf"))
	copyFile(t, "testdata/release-v2/second.toml", filepath.Join(dir, "components", "second.toml"))
	c.ok(dir, "apps", "sync", ".", "--app", "demo")
	c.fails(1, "batch_size", "releases", "create", "--app", "demo", "--selector", "env=prod", "--batch-size", "0")
	c.fails(1, "installs.selector", "releases", "create", "--app", "demo", "--selector", "env=staging")
	c.fails(1, "none of the others can be", "releases", "create", "--app", "demo", "--all", "--selector", "env=prod")
	c.fails(6, "cust-b", "releases", "create", "--app", "demo", "--selector", "env=prod", "--wait")

	var list struct {
		Releases []release `json:"releases"`
	}
	c.json("", &list, "releases", "list", "--app", "demo")
	if len(list.Releases) != 1 || list.Releases[0].Status != "halted" {
		t.Fatalf("releases: %+v", list.Releases)
	}
	id := list.Releases[0].ID
	if out := c.ok("", "releases", "show", "--app", "demo", id); !strings.Contains(out, "halted: install cust-b") || !strings.Contains(out, "cust-c\tpending") {
		t.Fatalf("releases show:\n%s", out)
	}
	c.fails(5, "release "+id, "releases", "create", "--app", "demo", "--all")
	c.ok("", "inputs", "set", "cust-b", "--input", "mode=ok")
	c.ok("", "releases", "resume", "--app", "demo", id, "--wait")

	var back release
	c.json("", &back, "releases", "rollback", "--app", "demo", id, "--wait")
	if back.Status != "succeeded" || back.RollbackOf != id {
		t.Fatalf("rollback: %+v", back)
	}
	for _, name := range []string{"cust-a", "cust-b", "cust-c"} {
		var shown struct {
			Install struct {
				ConfigVersion int `json:"config_version"`
			} `json:"install"`
		}
		if c.json("", &shown, "installs", "show", name); shown.Install.ConfigVersion != 1 {
			t.Fatalf("%s runs config version %d after the rollback", name, shown.Install.ConfigVersion)
		}
	}
}
