package appconfig

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/protocol"
)

// renderConfig: db takes typed inputs and outputs, whole and within
// strings, lists and tables.
func renderConfig(t *testing.T) *Config {
	t.Helper()
	files := base()
	replace(files, "outpost.toml", "[[inputs]]", `[[inputs]]
name = "replicas"
type = "number"
default = 3

[[inputs]]
name = "ha"
type = "bool"
default = false

[[inputs]]
name = "zones"
type = "list"
default = ["a", "b"]

[[inputs]]
name = "labels"
type = "map"

[[inputs]]
name = "note"
type = "string"

[[inputs]]
`)
	files["modules/db/main.tf"] = file(`
variable "password" {
  type      = string
  sensitive = true
}
variable "admin_password" {}
variable "replicas" {}
variable "ha" {}
variable "zones" {}
variable "labels" {}
variable "summary" {}
variable "nested" {}
variable "cidr" {}
variable "literal" {}
variable "nothing" {}
output "url" {
  value     = "x"
  sensitive = true
}
output "host" { value = "db" }
`)
	files["components/db.toml"] = file(`
name = "db"
type = "terraform_module"
source = "modules/db"
[variables]
password = "static"
admin_password = "{{ .install.inputs.password }}"
replicas = "{{ .install.inputs.replicas }}"
ha = "{{.install.inputs.ha}}"
zones = "{{ .install.inputs.zones }}"
labels = "{{ .install.inputs.labels }}"
summary = "{{ .install.inputs.replicas }} replicas in {{ .install.inputs.region }} for {{ .install.name }}"
nested = { list = ["{{ .install.inputs.replicas }}", "{{ .sandbox.outputs.cidr }}"], secret = "pw={{ .install.inputs.password }}" }
cidr = "{{ .sandbox.outputs.cidr }}"
literal = 42
nothing = "{{ .install.inputs.note }}"
[env_vars]
TF_VAR_x = "{{ .install.inputs.zones }}"
REPLICAS = "{{ .install.inputs.replicas }}"
PGPASSWORD = "{{ .install.inputs.password }}"
CLUSTER = "{{ .sandbox.outputs.cluster }}"
`)
	files["components/web.toml"] = file(`
name = "web"
type = "terraform_module"
source = "modules/web"
[variables]
db_host = "{{ .components.db.outputs.host }}"
replicas = "{{ .components.db.outputs.url }}"
[env_vars]
SECRET_HOST = "{{ .sandbox.outputs.cluster }}"
`)
	return load(t, files)
}

func renderData(t *testing.T, c *Config) Data {
	t.Helper()
	inputs, err := c.ResolveInputs(map[string]string{"password": "hunter2", "region": "us", "labels": `{"team":"core"}`}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sandbox, err := OutputValues(map[string]protocol.TerraformOutput{
		"cidr":    {Value: json.RawMessage(`"10.0.0.0/16"`)},
		"cluster": {Value: json.RawMessage(`"k1"`), Sensitive: true}, // sensitive at run time only
	})
	if err != nil {
		t.Fatal(err)
	}
	return Data{InstallID: "ins_1", InstallName: "acme", Inputs: inputs, SandboxOutputs: sandbox}
}

func TestRenderKeepsTypesAndTracksSensitivity(t *testing.T) {
	c := renderConfig(t)
	r, err := c.RenderComponent("db", renderData(t, c))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"password":       `"static"`,
		"admin_password": `"hunter2"`,
		"replicas":       `3`,
		"ha":             `false`,
		"zones":          `["a","b"]`,
		"labels":         `{"team":"core"}`,
		"summary":        `"3 replicas in us for acme"`,
		"nested":         `{"list":[3,"10.0.0.0/16"],"secret":"pw=hunter2"}`,
		"cidr":           `"10.0.0.0/16"`,
		"literal":        `42`,
		"nothing":        `""`,
	}
	got := map[string]string{}
	for k, v := range r.Variables {
		got[k] = string(v)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("variables:\n got %v\nwant %v", got, want)
	}
	wantEnv := map[string]string{"TF_VAR_x": `["a","b"]`, "REPLICAS": "3", "PGPASSWORD": "hunter2", "CLUSTER": "k1"}
	if !reflect.DeepEqual(r.EnvVars, wantEnv) {
		t.Errorf("env vars = %v, want %v", r.EnvVars, wantEnv)
	}
	// password: the module declares it sensitive; admin_password and nested
	// read a sensitive input; CLUSTER a sensitive output.
	wantSensitive := []string{"env_vars.CLUSTER", "env_vars.PGPASSWORD", "variables.admin_password", "variables.nested", "variables.password"}
	if !reflect.DeepEqual(r.Sensitive, wantSensitive) {
		t.Errorf("sensitive = %v, want %v", r.Sensitive, wantSensitive)
	}

	red := r.Redacted()
	b, _ := json.Marshal(red)
	for _, secret := range []string{"hunter2", "k1", "static"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("redacted rendering shows %q: %s", secret, b)
		}
	}
	if string(red.Variables["replicas"]) != "3" || red.EnvVars["REPLICAS"] != "3" || string(red.Variables["password"]) != `"(sensitive)"` {
		t.Errorf("redacted = %s", b)
	}
	if string(r.Variables["admin_password"]) != `"hunter2"` {
		t.Error("Redacted changed the original")
	}
	if got, want := r.Secrets(), []string{`{"list":[3,"10.0.0.0/16"],"secret":"pw=hunter2"}`, "hunter2", "static", "k1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("secrets = %q, want %q", got, want)
	}
}

// What a job's runner scrubs: the sensitive inputs and outputs, at any
// depth, not the plain ones.
func TestDataSensitiveListsTheSecretValues(t *testing.T) {
	d := renderData(t, renderConfig(t))
	d.Components = map[string]map[string]Value{"db": {
		"url":  {Value: map[string]any{"dsn": "postgres://u:pw-77@db", "port": json.Number("5432")}, Sensitive: true},
		"host": {Value: "db.internal"}}}
	if got, want := d.Sensitive(), []string{"5432", "hunter2", "k1", "postgres://u:pw-77@db"}; !reflect.DeepEqual(got, want) {
		t.Errorf("sensitive values %q, want %q", got, want)
	}
}

func TestRenderComponentOutputs(t *testing.T) {
	c := renderConfig(t)
	d := renderData(t, c)

	// db's outputs are not there yet: the error names the file and key.
	_, err := c.RenderComponent("web", d)
	var ps Problems
	if !errors.As(err, &ps) || len(ps) != 2 || ps[0].File != "components/web.toml" || ps[0].Key != "variables.db_host" ||
		!strings.Contains(ps[0].Message, `component "db" has no output "host"`) {
		t.Fatalf("render before db is deployed: %v", err)
	}

	// url is sensitive because the module says so, though the job's
	// result does not.
	db, err := OutputValues(map[string]protocol.TerraformOutput{
		"host": {Value: json.RawMessage(`"db.internal"`)},
		"url":  {Value: json.RawMessage(`"postgres://x"`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	d.Components = map[string]map[string]Value{"db": db}
	r, err := c.RenderComponent("web", d)
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Variables["db_host"]) != `"db.internal"` || string(r.Variables["replicas"]) != `"postgres://x"` {
		t.Errorf("variables = %v", r.Variables)
	}
	if want := []string{"env_vars.SECRET_HOST", "variables.replicas"}; !reflect.DeepEqual(r.Sensitive, want) {
		t.Errorf("sensitive = %v, want %v", r.Sensitive, want)
	}
}

func TestRenderSandbox(t *testing.T) {
	c := load(t, base())
	r, err := c.RenderSandbox(Data{InstallName: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Variables["name"]) != `"acme"` || len(r.Sensitive) != 0 {
		t.Errorf("sandbox = %+v", r)
	}
}

// TestRenderIndex: index reaches names that are not identifiers, and is
// checked like a dotted reference.
func TestRenderIndex(t *testing.T) {
	files := base()
	appendTo(files, "sandbox/main.tf", "output \"vpc-id\" { value = \"v\" }\n")
	replace(files, "components/db.toml", `cidr = "{{ .sandbox.outputs.cidr }}"`, `cidr = '{{ index .sandbox.outputs "vpc-id" }}'`)
	c := load(t, files)
	r, err := c.RenderComponent("db", Data{Inputs: map[string]Value{"password": {Value: "pw"}},
		SandboxOutputs: map[string]Value{"vpc-id": {Value: "vpc-1"}}})
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Variables["cidr"]) != `"vpc-1"` {
		t.Errorf("cidr = %s", r.Variables["cidr"])
	}
	replace(files, "components/db.toml", `"vpc-id"`, `"vpc-name"`)
	ps := problemsOf(t, files)
	if len(ps) != 1 || ps[0].Key != "variables.cidr" || !strings.Contains(ps[0].Message, `.sandbox.outputs.vpc-name: the sandbox module (sandbox) has no output "vpc-name"`) {
		t.Errorf("problems = %v", ps)
	}
}

func TestRenderNullOutputKeepsNull(t *testing.T) {
	c := load(t, base())
	d := Data{Components: map[string]map[string]Value{"db": {"host": {Value: nil}}}}
	r, err := c.RenderComponent("web", d)
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Variables["db_host"]) != "null" {
		t.Errorf("db_host = %s, want null", r.Variables["db_host"])
	}
}

func TestResolveInputs(t *testing.T) {
	c := renderConfig(t)
	got, err := c.ResolveInputs(map[string]string{"password": "pw", "replicas": "5", "ha": "true", "zones": `["z"]`, "other": "x"}, map[string]bool{"region": true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Value{
		"region":   {Value: "eu", Sensitive: true},
		"password": {Value: "pw", Sensitive: true},
		"replicas": {Value: json.Number("5")},
		"ha":       {Value: true},
		"zones":    {Value: []any{"z"}},
		"labels":   {Value: map[string]any{}},
		"note":     {Value: ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("inputs:\n got %#v\nwant %#v", got, want)
	}

	_, err = c.ResolveInputs(map[string]string{"replicas": "many", "ha": "yes", "zones": `{"a":1}`}, nil)
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("bad inputs: %v", err)
	}
	wantPs := Problems{
		{"", "inputs.replicas", `input "replicas" (number): "many" is not a number`},
		{"", "inputs.ha", `input "ha" (bool): "yes" is not true or false`},
		{"", "inputs.zones", `input "zones" (list): must be a list in JSON (e.g. ["a", "b"])`},
		{"", "inputs.password", `input "password" is required`},
	}
	if !reflect.DeepEqual(ps, wantPs) {
		t.Errorf("problems:\n%v\nwant\n%v", ps, wantPs)
	}
}
