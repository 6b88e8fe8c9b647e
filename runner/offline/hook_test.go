package offline

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/releasebundle/bundletest"
	"github.com/outpost-dev/outpost/runner/plugins/terraform"
)

// hookApp is an app whose api reads the migrate action's output, which
// migrate's hook before api's deploy writes (migrate is its script); warm
// runs after api, notify after the provision whatever happened, and check
// (failing, continue_on_failure) before it.
func hookApp(t *testing.T, migrate string) string {
	dir := t.TempDir()
	files := map[string]string{
		"outpost.toml":    "[app]\nname = \"shop\"\n\n[sandbox]\nsource = \"sandbox\"\n",
		"sandbox/main.tf": "output \"region\" {\n  value = \"eu\"\n}\n",
		"components/api.toml": "name = \"api\"\ntype = \"terraform_module\"\nsource = \"modules/api\"\n\n[variables]\n" +
			"schema_version = \"{{ .actions.migrate.outputs.schema_version }}\"\n",
		"modules/api/main.tf": "variable \"schema_version\" {\n  type = string\n}\n\noutput \"schema_version\" {\n  value = var.schema_version\n}\n",
		"actions/migrate.toml": "timeout = \"1m\"\nsensitive_outputs = [\"token\"]\n\n[env_vars]\nTARGET = \"{{ .action.inputs.version }}\"\n" +
			"REGION = \"{{ .sandbox.outputs.region }}\"\n\n[[inputs]]\nname = \"version\"\ntype = \"number\"\ndefault = 2\n\n" +
			"[[triggers]]\ntype = \"before\"\noperation = \"deploy_component\"\ncomponent = \"api\"\ninputs = { version = \"7\" }\n\n" +
			"[[steps]]\nname = \"migrate\"\nscript = \"migrate.sh\"\n",
		"actions/migrate.sh": migrate,
		"actions/warm.toml": "timeout = \"1m\"\n\n[env_vars]\nSCHEMA = \"{{ .components.api.outputs.schema_version }}\"\n\n" +
			"[[triggers]]\ntype = \"after\"\noperation = \"deploy_component\"\ncomponent = \"api\"\n\n" +
			"[[steps]]\nname = \"warm\"\ncommand = [\"sh\", \"-c\", \"echo warmed=$SCHEMA >>$OUTPOST_OUTPUTS\"]\n",
		"actions/notify.toml": "timeout = \"1m\"\n\n[[triggers]]\ntype = \"after\"\noperation = \"provision\"\nwhen = \"always\"\n\n" +
			"[[steps]]\nname = \"notify\"\ncommand = [\"sh\", \"-c\", \"echo notified\"]\n",
		"actions/check.toml": "timeout = \"1m\"\n\n[[triggers]]\ntype = \"before\"\noperation = \"provision\"\ncontinue_on_failure = true\n\n" +
			"[[steps]]\nname = \"check\"\ncommand = [\"sh\", \"-c\", \"echo no network; exit 1\"]\n",
	}
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// deployApp exports app in a signed bundle (no build: its modules come from
// the config version) and deploys it, its jobs run by this test binary.
func deployApp(t *testing.T, app string) *protocol.OfflineResult {
	t.Helper()
	f := bundletest.New(t, 1)
	archive, err := appconfig.ArchiveDir(os.DirFS(app), ".")
	if err != nil {
		t.Fatal(err)
	}
	f.Contents.ConfigArchive, f.Contents.Artifacts = archive, nil
	tf, _, err := terraform.Options{NoInitCache: true}.Resolve(os.Getenv("PATH"), app)
	if err != nil {
		t.Skipf("terraform: %v", err)
	}
	res, err := Deploy(context.Background(), Options{Bundle: f.Export(t, t.TempDir()), ReleaseKey: f.Pub,
		Install:  protocol.OfflineInstall{Format: protocol.OfflineInstallFormat, AppID: f.Contents.App, InstallID: "ins_1", InstallName: "one"},
		StateDir: filepath.Join(t.TempDir(), "state"), RunnerExe: os.Args[0], HelmExe: os.Args[0], JobEnv: tf.Env("")})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "result.json")
	if err := writeResult(path, res); err != nil {
		t.Fatalf("the result: %v", err)
	}
	read := bundletest.ReadResult(t, path) // as the vendor reads it
	return &read
}

func resultStep(t *testing.T, r *protocol.OfflineResult, name string) protocol.OfflineStep {
	t.Helper()
	for _, st := range r.Steps {
		if st.Name == name {
			return st
		}
	}
	t.Fatalf("no step %s: %s", name, bundletest.Steps(*r))
	return protocol.OfflineStep{}
}

// The hooks run where the connected provision runs them, each an action
// job: migrate's output feeds api's variable, warm sees what api deployed,
// a sensitive output is in neither the result nor a log, and a hook with
// continue_on_failure that failed does not fail the deploy.
func TestOfflineDeployRunsLifecycleHooks(t *testing.T) {
	res := deployApp(t, hookApp(t, "#!/bin/sh\nset -eu\necho \"migrating in $REGION to $TARGET\"\n"+
		"echo schema_version=$TARGET >>\"$OUTPOST_OUTPUTS\"\necho token=tok-$TARGET-s3cret >>\"$OUTPOST_OUTPUTS\"\necho \"the token is tok-$TARGET-s3cret\"\n"))
	want := "before:check failed, sandbox succeeded, sync succeeded, before:migrate:api succeeded, api succeeded, after:warm:api succeeded, after:notify succeeded"
	if got := bundletest.Steps(*res); got != want || res.Status != "succeeded" {
		t.Fatalf("steps: %s (%s: %s)\nwant %s, succeeded", got, res.Status, res.Error, want)
	}
	migrate := resultStep(t, res, "before:migrate:api")
	if migrate.Kind != protocol.OfflineStepHook || migrate.Outputs["schema_version"] != "7" || migrate.Outputs["token"] != nil {
		t.Errorf("migrate's step: kind %s, outputs %v: want a hook with schema_version 7 and not the sensitive token", migrate.Kind, migrate.Outputs)
	}
	if !strings.Contains(migrate.Log, "migrating in eu to 7") || !strings.Contains(migrate.Log, "the token is (sensitive value)") {
		t.Errorf("migrate's log: want its script's lines, the token masked:\n%s", migrate.Log)
	}
	if got := resultStep(t, res, "api").Outputs["schema_version"]; got != "7" {
		t.Errorf("api's output schema_version %v, want migrate's 7", got)
	}
	if got := resultStep(t, res, "after:warm:api").Outputs["warmed"]; got != "7" {
		t.Errorf("warm's output warmed %v, want api's schema_version 7", got)
	}
	if check := resultStep(t, res, "before:check"); !strings.Contains(check.Error, "exited with code 1") || !strings.Contains(check.Log, "no network") {
		t.Errorf("check's step: error %q, log %q", check.Error, check.Log)
	}
	if raw, _ := json.Marshal(res); strings.Contains(string(raw), "s3cret") {
		t.Errorf("the result holds the sensitive output")
	}
}

// A before-hook that fails stops its component and what follows it (its
// after-hook with when = success); an after-hook with when = always still
// runs, and the deploy fails naming the hook.
func TestOfflineFailingBeforeHookStopsItsComponent(t *testing.T) {
	res := deployApp(t, hookApp(t, "#!/bin/sh\necho \"no database in $REGION\"\nexit 3\n"))
	want := "before:check failed, sandbox succeeded, sync succeeded, before:migrate:api failed, api skipped, after:warm:api skipped, after:notify succeeded"
	if got := bundletest.Steps(*res); got != want {
		t.Fatalf("steps: %s\nwant %s", got, want)
	}
	if res.Status != "failed" || res.Error != "step before:migrate:api: action migrate, step migrate: exited with code 3" {
		t.Errorf("result %s: %q", res.Status, res.Error)
	}
	if api := resultStep(t, res, "api"); api.Error != "skipped: before:migrate:api did not succeed" {
		t.Errorf("api's error %q", api.Error)
	}
	if warm := resultStep(t, res, "after:warm:api"); warm.Error != "skipped: api did not run" {
		t.Errorf("warm's error %q", warm.Error)
	}
	if !strings.Contains(resultStep(t, res, "before:migrate:api").Log, "no database in eu") {
		t.Errorf("migrate's log has not its script's line")
	}
}
