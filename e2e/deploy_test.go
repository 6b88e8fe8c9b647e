package e2e

import (
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
)

// Deploying config versions to the demo install: version 2 changes cache's
// module (a new build) and removes web, which nothing depends on. Deploying
// it applies cache with its new build, tears web down, and leaves the rest
// unchanged with no job; deploying version 1 again brings the old builds
// (and web) back, and a deprovision then runs version 1. An unknown version
// is a 422 naming config_version.
func TestDeployConfigVersions(t *testing.T) {
	s := newStack(t, stackOptions{})
	dir := t.TempDir()
	copyDir(t, exampleDir, dir)
	s.syncConfig(dir)
	const secret = "d3ploy-s3cret-pa55word"
	inst, _ := s.newInstall("cust-v", map[string]any{"name": "db_password", "value": secret, "sensitive": true})
	prov := s.provisioned(inst, 5*time.Minute)
	// Each step names the steps it ran after: the app's dependencies, and
	// api's hooks (migrate before it, warm_cache after it).
	checkAfter(t, prov, map[string][]string{"sandbox": {}, "network": {"sandbox"}, "cache": {"network", "sandbox"},
		"before:migrate:api": {"cache", "database", "network", "sandbox"}, "api": {"before:migrate:api", "cache", "database", "network", "sandbox"},
		"after:warm_cache:api": {"api"}})
	v1 := s.installComponents(inst)
	if len(v1) != 6 || v1["cache"].ConfigVersion != 1 || s.installVersions(inst).ConfigVersion != 1 {
		t.Fatalf("after the provision: components %+v, config version %d", v1, s.installVersions(inst).ConfigVersion)
	}

	writeVersion2(t, dir)
	s.syncConfig(dir)
	s.checkBadDeploys(inst)

	// Plan only: cache's new build and web's teardown are planned, nothing
	// changes.
	plan := s.waitOp(inst, s.startOp(inst, "/deploy", map[string]any{"config_version": 2, "plan_only": true}).ID, 5*time.Minute)
	for name, want := range map[string]status.Step{"cache": status.StepPlanned, "web": status.StepPlanned, "api": status.StepUnchanged} {
		if st := plan.step(t, name); plan.Status != status.OpSucceeded || st.Status != want || st.ApplyJobID != "" {
			t.Fatalf("plan-only deploy: %s %q, step %s %+v, want %s", plan.Status, plan.Error, name, st, want)
		}
	}
	if got := s.installComponents(inst); got["cache"] != v1["cache"] || s.installVersions(inst).ConfigVersion != 1 {
		t.Fatalf("after a plan-only deploy the install runs %+v", got)
	}

	deploy := s.startOp(inst, "/deploy", nil) // the latest: version 2
	if deploy.Kind != "deploy_config" || deploy.WorkflowID != "install/"+inst+"/deploy_config" {
		t.Fatalf("deploy operation %+v", deploy)
	}
	if code := s.do("POST", "/v1/installs/"+inst+"/deploy", map[string]any{"config_version": 1}, nil); code != http.StatusConflict {
		t.Fatalf("a second deploy while one runs = %d, want 409", code)
	}
	op := s.waitOp(inst, deploy.ID, 5*time.Minute)
	checkChangedSteps(t, op, status.StepSucceeded, []string{"cache", "web"},
		[]string{"sandbox", "network", "database", "api", "cluster"})
	if web := op.step(t, "web"); !web.Destroy {
		t.Fatalf("web was not torn down: %+v", web)
	}
	v2 := s.installComponents(inst)
	if _, ok := v2["web"]; ok || len(v2) != 5 {
		t.Fatalf("after deploying version 2: components %+v, want web gone", v2)
	}
	if c := v2["cache"]; c.BuildID == v1["cache"].BuildID || c.Digest == v1["cache"].Digest || c.ConfigVersion != 2 {
		t.Fatalf("cache runs %+v after deploying version 2, was %+v", c, v1["cache"])
	}
	for _, name := range []string{"network", "database", "api", "cluster"} {
		if v2[name].BuildID != v1[name].BuildID || v2[name].ConfigVersion != 1 {
			t.Fatalf("%s runs %+v, was %+v: an unchanged component keeps its build", name, v2[name], v1[name])
		}
	}
	s.checkInstallRegistryHoldsBuilds(inst, slices.Collect(maps.Values(v2)))
	if v := s.installVersions(inst).ConfigVersion; v != 2 {
		t.Fatalf("install config version %d after deploying version 2", v)
	}
	s.assertSecretHidden(inst, op, secret)
	s.replay(op.WorkflowID)

	// Back to version 1: its cache build and web come back.
	op = s.waitOp(inst, s.startOp(inst, "/deploy", map[string]any{"config_version": 1}).ID, 5*time.Minute)
	checkChangedSteps(t, op, status.StepSucceeded, []string{"cache", "web"},
		[]string{"sandbox", "network", "database", "api", "cluster"})
	back := s.installComponents(inst)
	for name, c := range v1 {
		if back[name].BuildID != c.BuildID || back[name].Digest != c.Digest {
			t.Fatalf("%s runs %+v after deploying version 1 again, want %+v", name, back[name], c)
		}
	}
	if v := s.installVersions(inst).ConfigVersion; v != 1 {
		t.Fatalf("install config version %d after deploying version 1", v)
	}
	s.replay(op.WorkflowID)

	// A deprovision runs the version the install runs (1, not the latest):
	// web, which only version 1 has, goes too.
	de := s.waitOp(inst, s.startOp(inst, "/deprovision", nil).ID, 5*time.Minute)
	if de.Status != status.OpSucceeded || !de.step(t, "web").Destroy || de.step(t, "web").Status != status.StepSucceeded {
		t.Fatalf("deprovision: %s %q %+v", de.Status, de.Error, de.Steps)
	}
	// Destroys run in reverse: network after what used it, the sandbox last.
	checkAfter(t, de, map[string][]string{"api": {"web"}, "network": {"api", "cache", "database"}, "web": {},
		"sandbox": {"api", "cache", "cluster", "database", "network", "web"}})
	if left := s.installComponents(inst); len(left) != 0 {
		t.Fatalf("components left after the deprovision: %+v", left)
	}
}

// writeVersion2 changes cache's module (its resource gets a new input, so
// it is replaced) and removes the web component.
func writeVersion2(t *testing.T, dir string) {
	t.Helper()
	mod := filepath.Join(dir, "modules", "cache", "main.tf")
	b, err := os.ReadFile(mod)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(b), "memory_mb = var.memory_mb\n", "memory_mb = var.memory_mb\n    tier      = \"v2\"\n", 1)
	if changed == string(b) {
		t.Fatal("cache's module did not change")
	}
	if err := os.WriteFile(mod, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "components", "web.toml")); err != nil {
		t.Fatal(err)
	}
}

// checkBadDeploys: an unknown or impossible version is refused naming
// config_version, and starts nothing.
func (s *stack) checkBadDeploys(inst string) {
	s.t.Helper()
	for _, bad := range []struct {
		body any
		code int
		says string
	}{
		{map[string]any{"config_version": 7}, http.StatusUnprocessableEntity, "no config version 7 (the latest is 2)"},
		{map[string]any{"config_version": 0}, http.StatusBadRequest, "not a version"},
		{map[string]any{"config_version": "two"}, http.StatusBadRequest, "must be a number"},
	} {
		var e struct{ Field, Message string }
		code := s.do("POST", "/v1/installs/"+inst+"/deploy", bad.body, &e)
		if code != bad.code || e.Field != "config_version" || !strings.Contains(e.Message, bad.says) {
			s.t.Fatalf("deploy %v = %d %+v, want %d on config_version saying %q", bad.body, code, e, bad.code, bad.says)
		}
	}
	var ops struct {
		Operations []operation `json:"operations"`
	}
	s.do("GET", "/v1/installs/"+inst+"/operations", nil, &ops)
	if len(ops.Operations) != 1 {
		s.t.Fatalf("operations after refused deploys: %+v", ops.Operations)
	}
}

// installComponents is what the install runs, by component.
func (s *stack) installComponents(inst string) map[string]installComponent {
	out := map[string]installComponent{}
	for _, c := range s.installComponentList(inst) {
		out[c.Component] = c
	}
	return out
}

// installComponentList is what the install runs, as the API lists it.
func (s *stack) installComponentList(inst string) []installComponent {
	s.t.Helper()
	return getList[installComponent](s, "/v1/installs/"+inst+"/components", "components")
}

// checkAfter asserts the named steps' dependencies as the API shows them
// (in any order).
func checkAfter(t *testing.T, op operation, want map[string][]string) {
	t.Helper()
	for name, deps := range want {
		after := op.step(t, name).After
		if got := slices.Sorted(slices.Values(after)); after == nil || !slices.Equal(got, deps) {
			t.Errorf("%s %s: step %s runs after %q, want %q", op.Kind, op.ID, name, after, deps)
		}
	}
}
