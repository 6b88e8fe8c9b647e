package appconfig

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/outpost-dev/outpost/protocol"
)

// base is a small valid config: a sandbox and components db and web (web
// uses db's outputs).
func base() fstest.MapFS {
	return fstest.MapFS{
		"outpost.toml": file(`
[app]
name = "shop"
description = "a shop"

[sandbox]
source = "sandbox"
[sandbox.variables]
name = "{{ .install.name }}"

[[inputs]]
name = "region"
type = "string"
default = "eu"

[[inputs]]
name = "password"
type = "string"
required = true
sensitive = true
`),
		"sandbox/main.tf": file(`
variable "name" { type = string }
output "cluster" { value = var.name }
output "cidr" { value = "10.0.0.0/16" }
`),
		"modules/db/main.tf": file(`
variable "password" {
  type      = string
  sensitive = true
}
variable "cidr" { default = "" }
output "url" {
  value     = "postgres://${var.password}@db"
  sensitive = true
}
output "host" { value = "db" }
`),
		"modules/web/main.tf": file(`
variable "db_host" { type = string }
variable "replicas" { default = 1 }
output "url" { value = "https://web" }
`),
		"components/db.toml": file(`
name = "db"
type = "terraform_module"
source = "modules/db"
[variables]
password = "{{ .install.inputs.password }}"
cidr = "{{ .sandbox.outputs.cidr }}"
`),
		"components/web.toml": file(`
name = "web"
type = "terraform_module"
source = "./modules/web"
[variables]
db_host = "{{ .components.db.outputs.host }}"
`),
	}
}

func file(s string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte(strings.TrimPrefix(s, "\n"))}
}

// load loads files, which must be valid.
func load(t *testing.T, files fstest.MapFS) *Config {
	t.Helper()
	c, err := Load(files)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return c
}

// problemsOf loads files, which must be invalid, and returns the problems.
func problemsOf(t *testing.T, files fstest.MapFS) Problems {
	t.Helper()
	_, err := Load(files)
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("load: got %v, want Problems", err)
	}
	return ps
}

// problemCase changes a valid config so that it has a problem in file at
// key, whose message contains wantContains.
type problemCase struct {
	name         string
	change       func(fstest.MapFS)
	file, key    string
	wantContains string
}

// checkProblems checks each case on a fresh copy of the config valid makes.
func checkProblems(t *testing.T, valid func() fstest.MapFS, cases []problemCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			files := valid()
			tc.change(files)
			ps := problemsOf(t, files)
			for _, p := range ps {
				if p.File == tc.file && p.Key == tc.key && strings.Contains(p.Message, tc.wantContains) {
					return
				}
			}
			t.Fatalf("want a problem in %s at %q containing %q; got:\n%v", tc.file, tc.key, tc.wantContains, ps)
		})
	}
}

func TestBaseConfig(t *testing.T) {
	c := load(t, base())
	if c.App != (App{Name: "shop", Description: "a shop"}) {
		t.Errorf("app = %+v", c.App)
	}
	if got := c.ComponentNames(); !reflect.DeepEqual(got, []string{"db", "web"}) {
		t.Errorf("components = %v", got)
	}
	web, _ := c.Component("web")
	if web.Terraform.Source != "modules/web" || !reflect.DeepEqual(web.Dependencies, []string{"db"}) || len(web.DeclaredDependencies) != 0 {
		t.Errorf("web = %+v (terraform %+v)", web, web.Terraform)
	}
	if c.Sandbox.Module == nil || !reflect.DeepEqual(sortedKeys(c.Sandbox.Module.Outputs), []string{"cidr", "cluster"}) {
		t.Errorf("sandbox module = %+v", c.Sandbox.Module)
	}
	if got := c.Files(); !slices.Contains(got, "components/db.toml") || !slices.Contains(got, "modules/web/main.tf") {
		t.Errorf("files = %v", got)
	}
	if c.Inputs[1] != (Input{Name: "password", Type: "string", Required: true, Sensitive: true}) {
		t.Errorf("inputs = %+v", c.Inputs)
	}
}

// TestProblems: each kind of mistake is reported with its file, its key and
// why.
func TestProblems(t *testing.T) {
	checkProblems(t, base, []problemCase{
		{"unknown key with suggestion", func(f fstest.MapFS) {
			f["components/web.toml"] = file("name = \"web\"\ntype = \"terraform_module\"\nsource = \"modules/web\"\ndependecies = [\"db\"]\n[variables]\ndb_host = \"x\"\n")
		}, "components/web.toml", "dependecies", `unknown key "dependecies" (did you mean "dependencies"?)`},
		{"unknown key lists the known ones", func(f fstest.MapFS) { appendTo(f, "outpost.toml", "\n[extras]\nx = 1\n") },
			"outpost.toml", "extras", `unknown key "extras" (known keys: app, sandbox, inputs)`},
		{"unknown nested key", func(f fstest.MapFS) {
			replace(f, "outpost.toml", `description = "a shop"`, "description = \"a shop\"\nowner = \"me\"")
		},
			"outpost.toml", "app.owner", `unknown key "owner"`},
		{"unknown key in an input", func(f fstest.MapFS) { replace(f, "outpost.toml", `default = "eu"`, "default = \"eu\"\nsecret = true") },
			"outpost.toml", "inputs[0].secret", `unknown key "secret"`},
		{"wrong type", func(f fstest.MapFS) { replace(f, "outpost.toml", `name = "shop"`, `name = 5`) },
			"outpost.toml", "app.name", "must be a string, not an integer (5)"},
		{"wrong type of dependencies", func(f fstest.MapFS) {
			replace(f, "components/web.toml", `name = "web"`, "name = \"web\"\ndependencies = \"db\"")
		},
			"components/web.toml", "dependencies", `must be a list of strings, not a string ("db")`},
		{"wrong type in a list", func(f fstest.MapFS) {
			replace(f, "components/web.toml", `name = "web"`, "name = \"web\"\ndependencies = [\"db\", 3]")
		},
			"components/web.toml", "dependencies[1]", "must be a string, not an integer (3)"},
		{"wrong type of a bool", func(f fstest.MapFS) { replace(f, "outpost.toml", "required = true", `required = "yes"`) },
			"outpost.toml", "inputs[1].required", `must be true or false, not a string ("yes")`},
		{"env var not a string", func(f fstest.MapFS) { appendTo(f, "components/web.toml", "[env_vars]\nLOG_LEVEL = 1\n") },
			"components/web.toml", "env_vars.LOG_LEVEL", "must be a string, not an integer (1)"},
		{"bad env var name", func(f fstest.MapFS) { appendTo(f, "components/web.toml", "[env_vars]\n\"1BAD\" = \"x\"\n") },
			"components/web.toml", "env_vars.1BAD", "not a valid environment variable name"},
		{"dates are refused", func(f fstest.MapFS) { appendTo(f, "components/web.toml", "replicas = 1979-05-27\n") },
			"components/web.toml", "variables.replicas", "dates and times are not supported"},
		{"missing required key", func(f fstest.MapFS) { replace(f, "components/web.toml", "type = \"terraform_module\"\n", "") },
			"components/web.toml", "type", "is required"},
		{"missing sandbox", func(f fstest.MapFS) {
			f["outpost.toml"] = file("[app]\nname = \"shop\"\n")
		}, "outpost.toml", "sandbox", "is required"},
		{"missing config file", func(f fstest.MapFS) { delete(f, "outpost.toml") }, "outpost.toml", "", "missing"},
		{"bad TOML", func(f fstest.MapFS) { appendTo(f, "components/db.toml", "x = = 1\n") },
			"components/db.toml", "", "invalid TOML at line 7"},
		{"unknown component type", func(f fstest.MapFS) {
			replace(f, "components/web.toml", `type = "terraform_module"`, `type = "lambda"`)
		},
			"components/web.toml", "type", `unknown component type "lambda" (one of terraform_module, helm_chart, container_image, docker_build)`},
		{"missing source directory", func(f fstest.MapFS) {
			replace(f, "components/web.toml", `source = "./modules/web"`, `source = "modules/nope"`)
		},
			"components/web.toml", "source", `directory "modules/nope" does not exist in the config`},
		{"source without terraform files", func(f fstest.MapFS) {
			f["modules/empty/README.md"] = file("nothing\n")
			replace(f, "components/web.toml", `source = "./modules/web"`, `source = "modules/empty"`)
		}, "components/web.toml", "source", `directory "modules/empty" holds no terraform files`},
		{"source outside the config", func(f fstest.MapFS) { replace(f, "outpost.toml", `source = "sandbox"`, `source = "../sandbox"`) },
			"outpost.toml", "sandbox.source", "outside the config's directory"},
		{"remote source", func(f fstest.MapFS) {
			replace(f, "components/web.toml", `source = "./modules/web"`, `source = "git::https://example.com/web.git"`)
		}, "components/web.toml", "source", "only a directory of the config is supported"},
		{"source is a file", func(f fstest.MapFS) {
			replace(f, "components/web.toml", `source = "./modules/web"`, `source = "modules/web/main.tf"`)
		},
			"components/web.toml", "source", "is a file, not a directory"},
		{"terraform syntax error", func(f fstest.MapFS) { appendTo(f, "modules/web/main.tf", "output \"x\" {\n") },
			"modules/web/main.tf", "", "line 4: Unclosed configuration block"},
		{"module call leaving the module", func(f fstest.MapFS) {
			appendTo(f, "modules/web/main.tf", "module \"lib\" { source = \"../db\" }\n")
		}, "modules/web/main.tf", "module.lib.source", `"../db" is outside the module directory "modules/web"`},
		{"duplicate component names", func(f fstest.MapFS) { f["components/web2.toml"] = f["components/web.toml"] },
			"components/web2.toml", "name", `component "web" is already defined in components/web.toml`},
		{"bad component name", func(f fstest.MapFS) { replace(f, "components/web.toml", `name = "web"`, `name = "web-app"`) },
			"components/web.toml", "name", `"web-app" must be 1-63 lowercase letters, digits and '_'`},
		{"duplicate input names", func(f fstest.MapFS) { replace(f, "outpost.toml", `name = "password"`, `name = "region"`) },
			"outpost.toml", "inputs[1].name", `input "region" is already declared (inputs[0])`},
		{"bad input type", func(f fstest.MapFS) {
			replace(f, "outpost.toml", `type = "string"`+"\ndefault", `type = "text"`+"\ndefault")
		},
			"outpost.toml", "inputs[0].type", `"text" is not an input type (one of string, number, bool, list, map)`},
		{"default of the wrong type", func(f fstest.MapFS) { replace(f, "outpost.toml", `default = "eu"`, `default = 3`) },
			"outpost.toml", "inputs[0].default", `input "region" is a string, but its default is a number`},
		{"required input with a default", func(f fstest.MapFS) {
			replace(f, "outpost.toml", "required = true", "required = true\ndefault = \"x\"")
		},
			"outpost.toml", "inputs[1].default", `input "password" is required, so it cannot have a default`},
		{"unknown dependency", func(f fstest.MapFS) {
			replace(f, "components/web.toml", `name = "web"`, "name = \"web\"\ndependencies = [\"db\", \"queue\"]")
		},
			"components/web.toml", "dependencies[1]", `no component "queue" (components: "db", "web")`},
		{"depends on itself", func(f fstest.MapFS) {
			replace(f, "components/web.toml", `name = "web"`, "name = \"web\"\ndependencies = [\"web\"]")
		},
			"components/web.toml", "dependencies[0]", `component "web" cannot depend on itself`},
		{"dependency cycle", func(f fstest.MapFS) {
			replace(f, "components/db.toml", `name = "db"`, "name = \"db\"\ndependencies = [\"web\"]")
		},
			"components/db.toml", "dependencies", "dependency cycle db → web → db (db → web: dependencies; web → db: template in variables.db_host)"},
		{"undeclared module variable", func(f fstest.MapFS) { appendTo(f, "components/web.toml", "colour = \"red\"\n") },
			"components/web.toml", "variables.colour", `module modules/web declares no variable "colour" (variables: "db_host", "replicas")`},
		{"required module variable not set", func(f fstest.MapFS) {
			replace(f, "components/web.toml", `db_host = "{{ .components.db.outputs.host }}"`, "")
		},
			"components/web.toml", "variables", `module modules/web requires variable "db_host" (it has no default), which is not set`},
		{"template: unknown input", func(f fstest.MapFS) {
			appendTo(f, "components/web.toml", "replicas = \"{{ .install.inputs.replicas }}\"\n")
		},
			"components/web.toml", "variables.replicas", `.install.inputs.replicas: no input "replicas" is declared in outpost.toml (inputs: "region", "password")`},
		{"template: unknown component", func(f fstest.MapFS) {
			appendTo(f, "components/web.toml", "replicas = \"{{ .components.cache.outputs.size }}\"\n")
		},
			"components/web.toml", "variables.replicas", `.components.cache.outputs.size: no component "cache" (components: "db", "web")`},
		{"template: unknown component output", func(f fstest.MapFS) { replace(f, "components/web.toml", "outputs.host", "outputs.hostname") },
			"components/web.toml", "variables.db_host", `.components.db.outputs.hostname: component "db" (module modules/db) has no output "hostname" (outputs: "host", "url")`},
		{"template: unknown sandbox output", func(f fstest.MapFS) { replace(f, "components/db.toml", "outputs.cidr", "outputs.vpc") },
			"components/db.toml", "variables.cidr", `.sandbox.outputs.vpc: the sandbox module (sandbox) has no output "vpc" (outputs: "cidr", "cluster")`},
		{"template: sandbox uses a component", func(f fstest.MapFS) {
			replace(f, "outpost.toml", "{{ .install.name }}", "{{ .components.db.outputs.host }}")
		},
			"outpost.toml", "sandbox.variables.name", "the sandbox is provisioned before every component"},
		{"template: own outputs", func(f fstest.MapFS) {
			replace(f, "components/web.toml", ".components.db.outputs.host", ".components.web.outputs.url")
		},
			"components/web.toml", "variables.db_host", "a component cannot use its own outputs"},
		{"template: partial reference", func(f fstest.MapFS) {
			replace(f, "components/web.toml", "{{ .components.db.outputs.host }}", "{{ range .install.inputs }}{{ . }}{{ end }}")
		},
			"components/web.toml", "variables.db_host", ".install.inputs must name an input"},
		{"template: unknown root", func(f fstest.MapFS) { replace(f, "components/web.toml", ".components.db.outputs.host", ".app.name") },
			"components/web.toml", "variables.db_host", "unknown reference .app.name: templates can use"},
		{"template: the whole data", func(f fstest.MapFS) {
			replace(f, "components/web.toml", `"{{ .components.db.outputs.host }}"`, `'{{ printf "%v" $ }}'`)
		},
			"components/web.toml", "variables.db_host", "$ is the whole template data"},
		{"template: syntax error", func(f fstest.MapFS) {
			replace(f, "components/web.toml", "{{ .components.db.outputs.host }}", "{{ .components.db.outputs.host ")
		},
			"components/web.toml", "variables.db_host", "invalid template: "},
		{"template: in a nested value", func(f fstest.MapFS) {
			appendTo(f, "components/web.toml", "replicas = [\"{{ .install.inputs.zone }}\"]\n")
		},
			"components/web.toml", "variables.replicas[0]", `no input "zone"`},
		{"template: in an env var", func(f fstest.MapFS) {
			appendTo(f, "components/web.toml", "[env_vars]\nLOG_LEVEL = \"{{ .sandbox.outputs.log }}\"\n")
		},
			"components/web.toml", "env_vars.LOG_LEVEL", `has no output "log"`},
	})
}

// TestRunnerOwnedEnvVars: an env var the runner sets for terraform itself
// (protocol.TerraformRunnerEnv, the list the runner refuses at run time) is
// refused at sync, in a component and in the sandbox, saying why; TF_VAR_
// (which sets a variable) and other names pass.
func TestRunnerOwnedEnvVars(t *testing.T) {
	var cases []problemCase
	for _, listed := range protocol.TerraformRunnerEnvNames() {
		name := strings.Replace(listed, "*", "PASSWORD", 1)
		cases = append(cases, problemCase{name, func(f fstest.MapFS) {
			appendTo(f, "components/web.toml", "[env_vars]\n"+name+" = \"x\"\n")
		}, "components/web.toml", "env_vars." + name, "the runner sets " + name + " itself: "})
	}
	cases = append(cases, problemCase{"in the sandbox", func(f fstest.MapFS) {
		replace(f, "outpost.toml", "[sandbox.variables]", "[sandbox.env_vars]\nTF_CLI_CONFIG_FILE = \"/etc/mirror.tfrc\"\n[sandbox.variables]")
	}, "outpost.toml", "sandbox.env_vars.TF_CLI_CONFIG_FILE", "the runner gives terraform its own CLI configuration (outpost-runner --terraform-cli-config"})
	checkProblems(t, base, cases)

	files := base()
	appendTo(files, "components/web.toml", "[env_vars]\nTF_VAR_replicas = \"2\"\nAWS_REGION = \"eu-west-1\"\nTF_PLUGIN_CACHE_DIR = \"/tmp/p\"\n")
	web, _ := load(t, files).Component("web")
	if len(web.Terraform.EnvVars) != 3 {
		t.Errorf("env_vars = %v, want all three kept", web.Terraform.EnvVars)
	}
}

// TestNoEchoes: a problem is reported once, not again at every place that
// depends on what it broke.
func TestNoEchoes(t *testing.T) {
	files := base()
	replace(files, "outpost.toml", `type = "string"`+"\nrequired", `type = "secret"`+"\nrequired")
	ps := problemsOf(t, files)
	if len(ps) != 1 || ps[0].Key != "inputs[1].type" {
		t.Errorf("a bad input type: %v", ps)
	}

	files = base()
	appendTo(files, "outpost.toml", "[[[oops\n")
	ps = problemsOf(t, files)
	if len(ps) != 1 || ps[0].File != ConfigFile || !strings.Contains(ps[0].Message, "invalid TOML") {
		t.Errorf("outpost.toml that does not parse: %v", ps)
	}

	files = base()
	appendTo(files, "modules/db/main.tf", "output {\n")
	ps = problemsOf(t, files)
	if len(ps) != 1 || ps[0].File != "modules/db/main.tf" {
		t.Errorf("a module that does not parse: %v", ps)
	}
}

func replace(f fstest.MapFS, name, old, new string) {
	s := string(f[name].Data)
	if !strings.Contains(s, old) {
		panic(name + " does not contain " + old)
	}
	f[name] = file(strings.Replace(s, old, new, 1))
}

func appendTo(f fstest.MapFS, name, s string) {
	f[name] = file(string(f[name].Data) + s)
}

// TestAllProblemsAtOnce: problems in several files are all reported, not
// the first one only, grouped by file with outpost.toml first.
func TestAllProblemsAtOnce(t *testing.T) {
	files := base()
	replace(files, "outpost.toml", `name = "shop"`, `nam = "shop"`)
	replace(files, "components/db.toml", `source = "modules/db"`, `source = "modules/nope"`)
	replace(files, "components/web.toml", ".components.db.outputs.host", ".install.inputs.db_host")
	ps := problemsOf(t, files)
	want := Problems{
		{ConfigFile, "app.nam", `unknown key "nam" (did you mean "name"?)`},
		{ConfigFile, "app.name", "is required"},
		{"components/db.toml", "source", `directory "modules/nope" does not exist in the config`},
		{"components/web.toml", "variables.db_host", `.install.inputs.db_host: no input "db_host" is declared in outpost.toml (inputs: "region", "password")`},
	}
	if !reflect.DeepEqual(ps, want) {
		t.Fatalf("got:\n%v\nwant:\n%v", ps, want)
	}
	if !strings.Contains(ps.Error(), "4 problems") {
		t.Errorf("error text = %q", ps.Error())
	}
}
