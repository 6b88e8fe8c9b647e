package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/releasebundle/bundletest"
)

// The example demo app as it is, exported and deployed by `outpost-runner
// offline deploy` in a namespace with loopback only: migrate runs as api's
// before-hook (its script from the bundle) and its schema_version is api's;
// warm_cache runs after api; the imported result shows the hooks. On a
// second install whose database holds a schema version migrate cannot read,
// the hook fails: api and what follows it are skipped, the deploy fails.
func TestOfflineDeployRunsTheDemosHooks(t *testing.T) {
	s, c, dir, bundle, key := exampleBundle(t)
	ns := newNetns(t)
	deploy := func(name string, before func(installID string)) (string, protocol.OfflineResult, string, int) {
		sub := filepath.Join(dir, name)
		inst, installFile := s.offlineInstall(c, name, dir, map[string]any{"name": "db_password", "value": "vendor-side", "sensitive": true})
		t.Cleanup(func() {
			_ = ns.command(filepath.Join(binDir, "outpost-registry"), "down", "-dir", "/tmp/outpost-sandboxes/"+inst+"/registry").Run()
		})
		before(inst)
		result := filepath.Join(sub, "result.json")
		cmd := ns.command(runnerBin, offlineDeployArgs(bundle, installFile, key, filepath.Join(sub, "state"), result, "db_password="+name+"-pa55")...)
		cmd.Env = offlineDeployEnv(dir)
		out, err := cmd.CombinedOutput()
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			t.Fatal(err)
		} else if err != nil {
			t.Logf("offline deploy of %s: %v\n%s", name, err, out)
		}
		return inst, bundletest.ReadResult(t, result), result, cmd.ProcessState.ExitCode()
	}

	inst, res, result, code := deploy("hooked", func(string) {})
	if code != 0 || res.Status != "succeeded" {
		t.Fatalf("offline deploy of the demo: exit %d, %s: %s\nsteps: %s", code, res.Status, res.Error, bundletest.Steps(res))
	}
	checkDemoHooks(t, res)
	checkImportedHooks(t, c, inst, result)
	stopSandbox(t, inst)

	_, res, _, code = deploy("corrupt", func(inst string) {
		writeTestFile(t, filepath.Join("/tmp/outpost-sandboxes", inst, "database", "schema_version"), "garbage\n")
	})
	if code != 1 || res.Status != "failed" || !strings.HasPrefix(res.Error, "step before:migrate:api: action migrate, step migrate: exited with code 1") {
		t.Fatalf("deploy with a corrupt schema: exit %d, %s: %q", code, res.Status, res.Error)
	}
	migrate := offlineStep(t, res, "before:migrate:api")
	if migrate.Status != "failed" || !strings.Contains(migrate.Log, `holds "garbage", not a schema version`) {
		t.Errorf("migrate's step: %s, log:\n%s", migrate.Status, migrate.Log)
	}
	for name, why := range map[string]string{"api": "before:migrate:api did not succeed", "web": "api did not succeed",
		"after:warm_cache:api": "api did not run"} {
		if st := offlineStep(t, res, name); st.Status != "skipped" || st.Error != "skipped: "+why {
			t.Errorf("%s: %s %q, want skipped: %s", name, st.Status, st.Error, why)
		}
	}
	if st := offlineStep(t, res, "cluster"); st.Status != "succeeded" {
		t.Errorf("cluster (not after api): %s %s", st.Status, st.Error)
	}
}

// checkDemoHooks checks the demo's hooks in a deploy that succeeded: in the
// connected provision's places, migrate's output api's, warm_cache seeing
// api's URL.
func checkDemoHooks(t *testing.T, res protocol.OfflineResult) {
	t.Helper()
	var order []string
	for _, st := range res.Steps {
		order = append(order, st.Name)
	}
	got := strings.Join(order, " ")
	if !strings.Contains(got, "before:migrate:api api after:warm_cache:api") || len(order) != 10 {
		t.Errorf("steps %s: want the sandbox, the sync, seven components and migrate just before api, warm_cache just after", got)
	}
	migrate := offlineStep(t, res, "before:migrate:api")
	if migrate.Kind != protocol.OfflineStepHook || migrate.Outputs["schema_version"] != "2" || !strings.Contains(migrate.Log, "migrating ") {
		t.Errorf("migrate's step: %s, outputs %v, log:\n%s", migrate.Kind, migrate.Outputs, migrate.Log)
	}
	if v := offlineStep(t, res, "api").Outputs["schema_version"]; fmt.Sprint(v) != "2" {
		t.Errorf("api's schema_version %v, want migrate's 2", v)
	}
	url, _ := offlineStep(t, res, "api").Outputs["url"].(string)
	if warm := offlineStep(t, res, "after:warm_cache:api"); warm.Status != "succeeded" || url == "" || warm.Outputs["warmed"] != url {
		t.Errorf("warm_cache: %s, outputs %v, want warmed = api's url %q", warm.Status, warm.Outputs, url)
	}
}

// checkImportedHooks imports the result: the operation lists the hook steps.
func checkImportedHooks(t *testing.T, c *cli, installID, result string) {
	t.Helper()
	var op struct {
		Status string
		Steps  []protocol.OfflineStep
	}
	c.json("", &op, "installs", "import-result", installID, result)
	steps := bundletest.Steps(protocol.OfflineResult{Steps: op.Steps})
	if op.Status != "succeeded" || !strings.Contains(steps, "before:migrate:api succeeded") || !strings.Contains(steps, "after:warm_cache:api succeeded") {
		t.Errorf("imported: %s, steps %s", op.Status, steps)
	}
}
