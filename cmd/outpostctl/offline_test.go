package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/protocol"
)

// offlineApp is an app config of a sandbox and two inputs, one sensitive:
// no component, so no build (the test's API runs no workflow service).
func offlineApp(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"outpost.toml": "[app]\nname = \"demo\"\n\n[sandbox]\nsource = \"sandbox\"\n\n" +
			"[[inputs]]\nname = \"region\"\ntype = \"string\"\n\n" +
			"[[inputs]]\nname = \"db_password\"\ntype = \"string\"\nsensitive = true\n",
		"sandbox/main.tf": "output \"vpc_id\" {\n  value = \"vpc-0ff1\"\n}\n",
	}
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// writeResult writes r as a result file and returns its path.
func writeResult(t *testing.T, r protocol.OfflineResult) string {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "result.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// `installs export` writes the install file, whose sensitive input is
// named with no value; `installs import-result` makes the result an
// operation, says so when it was imported already, and refuses a bad
// field or a file that is not JSON, naming them.
func TestOfflineExportAndImportResult(t *testing.T) {
	apiURL, tok := realAPI(t)
	mustRun := mustRunner(t)
	mustRun("context", "add", "admin", "--api", apiURL, "--token-file", secretFile(t, tok))
	mustRun("apps", "create", "demo")
	mustRun("apps", "sync", offlineApp(t), "--app", "demo")
	const secret = "offline-pw-5e1b"
	mustRun("installs", "create", "--app", "demo", "--name", "acme", "--input", "db_password="+secret, "--input", "region=eu-west-3")

	file := filepath.Join(t.TempDir(), "acme.json")
	mustRun("installs", "export", "acme", "--out", file)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var f protocol.OfflineInstall
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("the install file: %v: %s", err, b)
	}
	if bytes.Contains(b, []byte(secret)) || f.Check() != nil || f.InstallName != "acme" || f.Inputs["region"] != "eu-west-3" ||
		len(f.Inputs) != 1 || !reflect.DeepEqual(f.SensitiveInputs, []string{"db_password"}) {
		t.Fatalf("the install file:\n%s", b)
	}
	if out := mustRun("installs", "export", "acme"); !strings.Contains(out, `"install_id": "`+f.InstallID+`"`) || strings.Contains(out, secret) {
		t.Fatalf("export to stdout:\n%s", out)
	}

	t0 := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	r := protocol.OfflineResult{Format: protocol.OfflineResultFormat, InstallID: f.InstallID, AppID: f.AppID, ConfigVersion: 1,
		BundleIndex: "sha256:" + strings.Repeat("cd", 32), Status: "succeeded", StartedAt: t0, FinishedAt: t0.Add(time.Minute),
		RunnerVersion: "test", Steps: []protocol.OfflineStep{{Name: "sandbox", Kind: protocol.OfflineStepSandbox,
			Status: "succeeded", StartedAt: t0, FinishedAt: t0.Add(time.Minute), Log: "Apply complete!\n"}}}
	result := writeResult(t, r)
	out := mustRun("installs", "import-result", "acme", result)
	m := regexp.MustCompile(`^imported: operation (op_\w+) \(offline_deploy, succeeded\) of install acme, config version 1, bundle index ` +
		r.BundleIndex + "\n$").FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("import-result: %s", out)
	}
	if out = mustRun("installs", "import-result", "acme", result); !strings.HasPrefix(out, "already imported: operation "+m[1]+" ") {
		t.Errorf("the same result again: %s", out)
	}
	var op struct{ ID, Source string }
	if err := json.Unmarshal([]byte(mustRun("-o", "json", "installs", "import-result", "acme", result)), &op); err != nil ||
		op.ID != m[1] || op.Source != "offline" {
		t.Errorf("-o json: %+v %v", op, err)
	}

	r.Steps[0].Status = "ok"
	if _, stderr, code := outpostctl(t, "installs", "import-result", "acme", writeResult(t, r)); code != exitUsage ||
		!strings.Contains(stderr, "steps[0].status") {
		t.Errorf("a bad step status: exit %d %s", code, stderr)
	}
	notJSON := secretFile(t, "format: outpost.offline-result/v1\n")
	if _, stderr, code := outpostctl(t, "installs", "import-result", "acme", notJSON); code != exitUsage ||
		!strings.Contains(stderr, notJSON+" is not an offline result") {
		t.Errorf("a file that is not JSON: exit %d %s", code, stderr)
	}
}
