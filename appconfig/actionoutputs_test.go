package appconfig

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

// withActionOutputs is withActions with a component web whose variables
// and environment read outputs of migrate's latest succeeded run.
func withActionOutputs() fstest.MapFS {
	files := withActions()
	files["modules/web/main.tf"] = file(`
variable "version" {}
variable "banner" {}
output "version" { value = var.version }
`)
	files["components/web.toml"] = file(`
name = "web"
type = "terraform_module"
source = "modules/web"
[variables]
version = "{{ .actions.migrate.outputs.version }}"
banner = "v{{ .actions.migrate.outputs.version }} in {{ .install.inputs.region }}"
[env_vars]
DB_PASSWORD = "{{ .actions.migrate.outputs.password }}"
SESSION = "{{ index .actions.migrate.outputs \"session_key\" }}"
`)
	return files
}

// migrateRan is what the store holds of migrate's latest succeeded run:
// password is plain at rest but listed in sensitive_outputs, session_key
// was sealed.
func migrateRan(d Data) Data {
	d.Actions = map[string]ActionOutputs{"migrate": {RunID: "act_7", Outputs: map[string]Value{
		"version":     {Value: "3"},
		"password":    {Value: "pw-5a1e"},
		"session_key": {Value: "sk-90d2", Sensitive: true},
	}}}
	return d
}

func TestActionOutputsInTemplates(t *testing.T) {
	c := load(t, withActionOutputs())
	if got := c.ActionsRead(); !reflect.DeepEqual(got, []string{"migrate"}) {
		t.Fatalf("ActionsRead = %v, want [migrate]", got)
	}
	d := migrateRan(Data{Inputs: map[string]Value{"region": {Value: "us"}}})
	r, err := c.RenderComponent("web", d)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(r.Variables["version"]) + " " + string(r.Variables["banner"]); got != `"3" "v3 in us"` {
		t.Errorf("variables = %s", got)
	}
	if r.EnvVars["DB_PASSWORD"] != "pw-5a1e" || r.EnvVars["SESSION"] != "sk-90d2" {
		t.Errorf("env = %v", r.EnvVars)
	}
	if want := []string{"env_vars.DB_PASSWORD", "env_vars.SESSION"}; !reflect.DeepEqual(r.Sensitive, want) {
		t.Errorf("sensitive = %v, want %v (one listed in sensitive_outputs, one sealed)", r.Sensitive, want)
	}
	red, _ := json.Marshal(r.Redacted())
	if strings.Contains(string(red), "pw-5a1e") || strings.Contains(string(red), "sk-90d2") {
		t.Errorf("redacted shows a secret: %s", red)
	}
	if got := d.Sensitive(); !reflect.DeepEqual(got, []string{"sk-90d2"}) {
		t.Errorf("Data.Sensitive = %v, want the sealed output", got)
	}
}

// An action never run successfully, or a run that wrote no such output,
// is a render error naming the action: never an empty string.
func TestActionOutputsMissing(t *testing.T) {
	c := load(t, withActionOutputs())
	d := Data{Inputs: map[string]Value{"region": {Value: "us"}}}
	_, err := c.RenderComponent("web", d)
	want := `components/web.toml: variables.version: action "migrate" has never run successfully on this install: run it (outpostctl actions run INSTALL migrate)`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("never run: %v, want %q", err, want)
	}
	d = migrateRan(d)
	delete(d.Actions["migrate"].Outputs, "version")
	_, err = c.RenderComponent("web", d)
	want = `variables.version: the latest successful run of action "migrate" (act_7) wrote no output "version" (outputs: "password", "session_key")`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("no such output: %v, want %q", err, want)
	}
}

// Checked at sync: the action must be in the config, the reference must
// name an output.
func TestActionOutputProblems(t *testing.T) {
	checkProblems(t, withActionOutputs, []problemCase{
		{"unknown action", func(f fstest.MapFS) {
			replace(f, "components/web.toml", ".actions.migrate.outputs.version }}\"\nbanner", ".actions.migrat.outputs.version }}\"\nbanner")
		}, "components/web.toml", "variables.version", `.actions.migrat.outputs.version: no action "migrat" (actions: "migrate", "ping")`},
		{"no outputs", func(f fstest.MapFS) {
			replace(f, "components/web.toml", "{{ .actions.migrate.outputs.password }}", "{{ .actions.migrate.password }}")
		}, "components/web.toml", "env_vars.DB_PASSWORD", "must name an action output: .actions.<action>.outputs.<name>"},
		{"in the sandbox", func(f fstest.MapFS) {
			replace(f, "outpost.toml", "[[inputs]]", "[sandbox.env_vars]\nV = \"{{ .actions.nope.outputs.v }}\"\n[[inputs]]")
		}, "outpost.toml", "sandbox.env_vars.V", `no action "nope"`},
		{"in an action", func(f fstest.MapFS) {
			replace(f, "actions/migrate.toml", "[env_vars]", "[env_vars]\nLAST = \"{{ .actions.pong.outputs.at }}\"")
		}, "actions/migrate.toml", "env_vars.LAST", `no action "pong"`},
	})

	// An action file that cannot be read is one problem, not one more at
	// each template that reads it.
	files := withActionOutputs()
	files["actions/migrate.toml"] = file("description = \n")
	for _, p := range problemsOf(t, files) {
		if p.File != "actions/migrate.toml" {
			t.Errorf("an echo of the broken action: %v", p)
		}
	}
}

// A chart's values read action outputs as a module's variables do: the
// sealed one is a sensitive value, redacted.
func TestActionOutputsInHelmValues(t *testing.T) {
	files := mixed()
	files["actions/migrate.toml"] = file("[[triggers]]\ntype = \"manual\"\n[[steps]]\nname = \"m\"\ncommand = [\"/bin/true\"]\n")
	replace(files, "components/frontend.toml", "[values.ingress]", "[values.schema]\nversion = \"{{ .actions.migrate.outputs.version }}\"\n"+
		"key = \"{{ .actions.migrate.outputs.session_key }}\"\n[values.ingress]")
	c := load(t, files)
	r, err := c.RenderHelmValues("frontend", migrateRan(helmData(t, c)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(r.Values), `"schema":{"key":"sk-90d2","version":"3"}`) || !r.IsSensitive("values.schema.key") ||
		r.IsSensitive("values.schema.version") {
		t.Errorf("values %s, sensitive %v", r.Values, r.Sensitive)
	}
	if red := r.Redacted(); strings.Contains(string(red.Values), "sk-90d2") {
		t.Errorf("redacted values show the sealed output: %s", red.Values)
	}
}
