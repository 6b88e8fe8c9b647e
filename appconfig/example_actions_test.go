package appconfig

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestExampleActionsAndRunbook: the demo's actions and runbook are what a
// vendor has — migrate by hand and before api's deploy, warm_cache after
// it, a five-minute health check of api, and the upgrade runbook.
func TestExampleActionsAndRunbook(t *testing.T) {
	c, err := Load(os.DirFS(exampleDir))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.ActionNames(); !reflect.DeepEqual(got, []string{"health", "hello", "migrate", "warm_cache"}) {
		t.Errorf("actions %v", got)
	}
	if got := c.ActionsRead(); !reflect.DeepEqual(got, []string{"migrate"}) {
		t.Errorf("actions the templates read: %v, want migrate (api's schema_version)", got)
	}
	migrate, _ := c.Action("migrate")
	if len(migrate.Triggers) != 2 || migrate.Triggers[0].Type != TriggerManual ||
		!reflect.DeepEqual(migrate.Triggers[1], Trigger{Type: TriggerBefore, Operation: "deploy_component", Component: "api"}) ||
		migrate.Inputs[0].Name != "version" || migrate.Inputs[0].Type != "number" {
		t.Errorf("migrate %+v, want manual with input version, and before api's deploy", migrate)
	}
	warm, _ := c.Action("warm_cache")
	if len(warm.Triggers) != 1 || warm.Triggers[0].Type != TriggerAfter || warm.Triggers[0].Component != "api" {
		t.Errorf("warm_cache triggers %+v, want after api's deploy", warm.Triggers)
	}
	health, _ := c.Action("health")
	if !health.Health || !reflect.DeepEqual(health.Components, []string{"api"}) || health.Triggers[0].Schedule != "*/5 * * * *" {
		t.Errorf("health %+v, want a health check of api every five minutes", health)
	}
	upgrade, ok := c.Runbook("upgrade")
	var steps []string
	for _, s := range upgrade.Steps {
		steps = append(steps, s.Name+"("+s.Kind+":"+s.Action+s.Component+")")
	}
	if want := []string{"migrate(action:migrate)", "deploy_api(deploy:api)", "approve(approval:)", "check(action:health)"}; !ok || !reflect.DeepEqual(steps, want) {
		t.Errorf("runbook upgrade %v (found %v), want %v", steps, ok, want)
	}
}

// runExampleAction runs an action's steps as its runner would: each script
// by /bin/sh in a clean environment with the action's rendered env_vars and
// $OUTPOST_OUTPUTS; it returns the outputs (key=value lines) and the log.
func runExampleAction(t *testing.T, c *Config, name string, d Data, given map[string]string) (map[string]string, string) {
	t.Helper()
	a, _ := c.Action(name)
	inputs, err := a.CheckRunInputs(given)
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.RenderActionEnv(name, d, inputs)
	if err != nil {
		t.Fatalf("render %s: %v", name, err)
	}
	dir := t.TempDir()
	outputs, log := map[string]string{}, ""
	for _, st := range a.Steps {
		script, file := filepath.Join(dir, st.Name+".sh"), filepath.Join(dir, st.Name+".outputs")
		if err := os.WriteFile(script, []byte(st.ScriptText), 0o700); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("/bin/sh", script)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "OUTPOST_OUTPUTS=" + file}
		for k, v := range r.EnvVars {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		out, err := cmd.CombinedOutput()
		if log += string(out); err != nil {
			t.Fatalf("action %s step %s: %v\n%s", name, st.Name, err, out)
		}
		b, _ := os.ReadFile(file)
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				outputs[k] = v
			}
		}
	}
	return outputs, log
}

// actionRan is d with outputs as the latest succeeded run of action.
func actionRan(d Data, action string, outputs map[string]string) Data {
	vals := map[string]Value{}
	for k, v := range outputs {
		vals[k] = Value{Value: v}
	}
	if d.Actions == nil {
		d.Actions = map[string]ActionOutputs{}
	}
	d.Actions[action] = ActionOutputs{RunID: "act_test", Outputs: vals}
	return d
}

// migrateExample runs migrate as api's before-hook does (its default
// version, 2), then by hand to version 1, which leaves the schema at 2: d
// with the outputs of that last run.
func migrateExample(t *testing.T, c *Config, d Data) Data {
	t.Helper()
	outs, log := runExampleAction(t, c, "migrate", d, nil)
	if outs["schema_version"] != "2" || !strings.Contains(log, "to schema version 1\n") || !strings.Contains(log, "to schema version 2\n") {
		t.Errorf("migrate (the hook): outputs %v, log:\n%s", outs, log)
	}
	outs, log = runExampleAction(t, c, "migrate", d, map[string]string{"version": "1"})
	if outs["schema_version"] != "2" || !strings.Contains(log, "at version 2: nothing to migrate for version 1") {
		t.Errorf("migrate to 1 after 2: outputs %v, log:\n%s", outs, log)
	}
	return actionRan(d, "migrate", outs)
}

// checkExampleAfterAPI: api's output schema_version is migrate's; the
// warm_cache hook and the health check read api's outputs.
func checkExampleAfterAPI(t *testing.T, c *Config, d Data) {
	t.Helper()
	url := d.Components["api"]["url"].Value
	if got := d.Components["api"]["schema_version"].Value; got != "2" {
		t.Errorf("api schema_version = %#v, want migrate's output \"2\"", got)
	}
	if outs, log := runExampleAction(t, c, "warm_cache", d, nil); outs["warmed"] != url || !strings.Contains(log, "(schema version 2)") {
		t.Errorf("warm_cache: outputs %v, log:\n%s", outs, log)
	}
	want := map[string]string{"health": "healthy", "health_reason": "2 API replicas at https://acme.eu-west-1.example.com"}
	if outs, _ := runExampleAction(t, c, "health", d, nil); !reflect.DeepEqual(outs, want) {
		t.Errorf("health: outputs %v, want %v", outs, want)
	}
}
