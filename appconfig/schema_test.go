package appconfig

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/BurntSushi/toml"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/outpost-dev/outpost/internal/testutil"
)

const schemaFile = "../schemas/app-config.schema.json"

func compileSchema(t *testing.T, ref string) *jsonschema.Schema {
	t.Helper()
	return testutil.CompileSchema(t, schemaFile, ref)
}

// asJSON is a TOML file as the JSON the schema describes.
func asJSON(t *testing.T, data []byte) any {
	t.Helper()
	var m map[string]any
	if _, err := toml.Decode(string(data), &m); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(normalize(m))
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestExampleConformsToSchema: every file of examples/demo-app is valid
// against the schema, as a whole and against its own kind.
func TestExampleConformsToSchema(t *testing.T) {
	root, configFile, componentFile := compileSchema(t, ""), compileSchema(t, "#/$defs/config_file"), compileSchema(t, "#/$defs/component_file")
	example := os.DirFS(exampleDir)
	names, err := fs.Glob(example, "components/*.toml")
	if err != nil || len(names) < 4 {
		t.Fatalf("component files: %v %v", names, err)
	}
	actions, err := fs.Glob(example, "actions/*.toml")
	if err != nil || len(actions) < 1 {
		t.Fatalf("action files: %v %v", actions, err)
	}
	actionFile := compileSchema(t, "#/$defs/action_file")
	for _, name := range append(append([]string{ConfigFile}, names...), actions...) {
		data, err := fs.ReadFile(example, name)
		if err != nil {
			t.Fatal(err)
		}
		v := asJSON(t, data)
		kind := componentFile
		switch path.Dir(name) {
		case ".":
			kind = configFile
		case ActionsDir:
			kind = actionFile
		}
		if err := kind.Validate(v); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if err := root.Validate(v); err != nil {
			t.Errorf("%s against the root schema: %v", name, err)
		}
	}
}

// TestSchemaAgreesWithLoad: mistakes the schema can see are refused by
// both the schema and Load.
func TestSchemaAgreesWithLoad(t *testing.T) {
	root := compileSchema(t, "")
	cases := []struct {
		name, file string
		change     func(fsys map[string]string)
	}{
		{"unknown top-level key", ConfigFile, func(f map[string]string) { f[ConfigFile] += "\n[extra]\nx = 1\n" }},
		{"unknown app key", ConfigFile, func(f map[string]string) {
			f[ConfigFile] = strings.Replace(f[ConfigFile], `description = "a shop"`, "description = \"a shop\"\nowner = \"x\"", 1)
		}},
		{"app name of the wrong type", ConfigFile, func(f map[string]string) {
			f[ConfigFile] = strings.Replace(f[ConfigFile], `name = "shop"`, `name = 1`, 1)
		}},
		{"missing sandbox source", ConfigFile, func(f map[string]string) {
			f[ConfigFile] = strings.Replace(f[ConfigFile], `source = "sandbox"`, ``, 1)
		}},
		{"unknown sandbox key", ConfigFile, func(f map[string]string) {
			f[ConfigFile] = strings.Replace(f[ConfigFile], `source = "sandbox"`, "source = \"sandbox\"\nregion = \"x\"", 1)
		}},
		{"bad input type", ConfigFile, func(f map[string]string) {
			f[ConfigFile] = strings.Replace(f[ConfigFile], `type = "string"`, `type = "text"`, 1)
		}},
		{"default of the wrong type", ConfigFile, func(f map[string]string) {
			f[ConfigFile] = strings.Replace(f[ConfigFile], `default = "eu"`, `default = 1`, 1)
		}},
		{"required input with a default", ConfigFile, func(f map[string]string) {
			f[ConfigFile] = strings.Replace(f[ConfigFile], "required = true", "required = true\ndefault = \"x\"", 1)
		}},
		{"bad input name", ConfigFile, func(f map[string]string) {
			f[ConfigFile] = strings.Replace(f[ConfigFile], `name = "region"`, `name = "Region"`, 1)
		}},
		{"unknown component key", "components/web.toml", func(f map[string]string) {
			f["components/web.toml"] = strings.Replace(f["components/web.toml"], `name = "web"`, "name = \"web\"\ndependecies = []", 1)
		}},
		{"unknown component type", "components/web.toml", func(f map[string]string) {
			f["components/web.toml"] = strings.Replace(f["components/web.toml"], `type = "terraform_module"`, `type = "lambda"`, 1)
		}},
		{"unsupported component type", "components/web.toml", func(f map[string]string) {
			f["components/web.toml"] = "name = \"web\"\ntype = \"docker_build\"\n"
		}},
		{"dependencies of the wrong type", "components/web.toml", func(f map[string]string) {
			f["components/web.toml"] = strings.Replace(f["components/web.toml"], `name = "web"`, "name = \"web\"\ndependencies = \"db\"", 1)
		}},
		{"missing source", "components/web.toml", func(f map[string]string) {
			f["components/web.toml"] = strings.Replace(f["components/web.toml"], `source = "./modules/web"`, "", 1)
		}},
		{"source outside the config", "components/web.toml", func(f map[string]string) {
			f["components/web.toml"] = strings.Replace(f["components/web.toml"], `source = "./modules/web"`, `source = "../web"`, 1)
		}},
		{"remote source", "components/web.toml", func(f map[string]string) {
			f["components/web.toml"] = strings.Replace(f["components/web.toml"], `source = "./modules/web"`, `source = "git::https://x/y.git"`, 1)
		}},
		{"env var not a string", "components/web.toml", func(f map[string]string) {
			f["components/web.toml"] += "[env_vars]\nLOG_LEVEL = 1\n"
		}},
		{"bad env var name", "components/web.toml", func(f map[string]string) {
			f["components/web.toml"] += "[env_vars]\n\"1X\" = \"a\"\n"
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			files := base()
			text := map[string]string{}
			for name, f := range files {
				text[name] = string(f.Data)
			}
			if err := root.Validate(asJSON(t, []byte(text[tc.file]))); err != nil {
				t.Fatalf("the base file is invalid: %v", err)
			}
			tc.change(text)
			if err := root.Validate(asJSON(t, []byte(text[tc.file]))); err == nil {
				t.Errorf("the schema accepts it")
			}
			for name, s := range text {
				files[name] = file(s)
			}
			if _, err := Load(files); err == nil {
				t.Errorf("Load accepts it")
			}
		})
	}
}

// TestSchemaKeysMatchGo: the schema names exactly the keys Load knows.
func TestSchemaKeysMatchGo(t *testing.T) {
	data, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	defs := s["$defs"].(map[string]any)
	var keysOf func(schema map[string]any) []string
	keysOf = func(schema map[string]any) []string {
		var out []string
		if ref, ok := schema["$ref"].(string); ok {
			out = append(out, keysOf(defs[path.Base(ref)].(map[string]any))...)
		}
		props, _ := schema["properties"].(map[string]any)
		for k := range props {
			out = append(out, k)
		}
		if all, ok := schema["allOf"].([]any); ok {
			for _, a := range all {
				if then, ok := a.(map[string]any)["then"].(map[string]any); ok {
					out = append(out, keysOf(then)...)
				}
			}
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	goKeys := func(fields []field) []string {
		var out []string
		for _, f := range fields {
			out = append(out, f.key)
		}
		slices.Sort(out)
		return out
	}
	sub := func(fields []field, key string) []field {
		i := slices.IndexFunc(fields, func(f field) bool { return f.key == key })
		return fields[i].fields
	}
	cfgProps := defs["config_file"].(map[string]any)["properties"].(map[string]any)
	checks := []struct {
		what           string
		schema, goKeys []string
	}{
		{"outpost.toml", keysOf(defs["config_file"].(map[string]any)), goKeys(configFileFields)},
		{"[app]", keysOf(cfgProps["app"].(map[string]any)), goKeys(sub(configFileFields, "app"))},
		{"[sandbox]", keysOf(cfgProps["sandbox"].(map[string]any)), goKeys(sub(configFileFields, "sandbox"))},
		{"[[inputs]]", keysOf(defs["input"].(map[string]any)), goKeys(sub(configFileFields, "inputs"))},
		{"actions/<name>.toml", keysOf(defs["action_file"].(map[string]any)), goKeys(actionFields)},
		{"[[triggers]]", keysOf(defs["action_trigger"].(map[string]any)), goKeys(triggerFields)},
		{"[[steps]]", keysOf(defs["action_step"].(map[string]any)), goKeys(stepFields)},
		{"runbooks/<name>.toml", keysOf(defs["runbook_file"].(map[string]any)), goKeys(runbookFields)},
		{"runbook [[steps]]", keysOf(defs["runbook_step"].(map[string]any)), goKeys(runbookStepFields)},
	}
	// Each supported type: the common keys and those of its allOf branch.
	common := keysOf(map[string]any{"properties": defs["component_file"].(map[string]any)["properties"]})
	branches := map[string]bool{}
	for _, a := range defs["component_file"].(map[string]any)["allOf"].([]any) {
		a := a.(map[string]any)
		typ := a["if"].(map[string]any)["properties"].(map[string]any)["type"].(map[string]any)["const"].(string)
		branches[typ] = true
		schemaKeys := append(slices.Clone(common), keysOf(a["then"].(map[string]any))...)
		slices.Sort(schemaKeys)
		checks = append(checks, struct {
			what           string
			schema, goKeys []string
		}{typ + " component", schemaKeys, goKeys(append(slices.Clone(componentCommonFields), componentTypeFields[typ]...))})
	}
	for _, typ := range SupportedTypes {
		if !branches[typ] {
			t.Errorf("the schema has no allOf branch for component type %s", typ)
		}
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.schema, c.goKeys) {
			t.Errorf("%s: the schema's keys %v, Load's %v", c.what, c.schema, c.goKeys)
		}
	}
	enum := defs["input"].(map[string]any)["properties"].(map[string]any)["type"].(map[string]any)["enum"]
	if want := strings.Join(InputTypes, ","); strings.Join(toStrings(enum), ",") != want {
		t.Errorf("input types: schema %v, Go %v", enum, InputTypes)
	}
	types := defs["component_file"].(map[string]any)["properties"].(map[string]any)["type"].(map[string]any)["enum"]
	if !reflect.DeepEqual(toStrings(types), SupportedTypes) {
		t.Errorf("component types: schema %v, Go %v", types, SupportedTypes)
	}
}

func toStrings(v any) []string {
	var out []string
	for _, e := range v.([]any) {
		out = append(out, e.(string))
	}
	return out
}

// TestNewTypesAgainstSchema: the helm_chart and container_image files of
// mixed() are valid against the schema; mistakes the schema can see in them
// are refused by both the schema and Load.
func TestNewTypesAgainstSchema(t *testing.T) {
	const fe, img = "components/frontend.toml", "components/api_image.toml"
	checkAgainstSchema(t, "#/$defs/component_file", mixed, []string{fe, img}, []schemaMistake{
		{"helm: missing source", fe, `source = "charts/web"`, ""},
		{"helm: source outside the config", fe, `source = "charts/web"`, `source = "../web"`},
		{"helm: remote source", fe, `source = "charts/web"`, `source = "oci://ghcr.io/acme/web"`},
		{"helm: unknown key", fe, `wait = true`, "wait = true\nchart = \"web\""},
		{"helm: terraform key", fe, `wait = true`, "wait = true\nenv_vars = { A = \"b\" }"},
		{"helm: bad release name", fe, `namespace = "shop"`, "namespace = \"shop\"\nrelease_name = \"Web\""},
		{"helm: release name too long", fe, `namespace = "shop"`, "namespace = \"shop\"\nrelease_name = \"" + strings.Repeat("a", 54) + "\""},
		{"helm: bad namespace", fe, `namespace = "shop"`, `namespace = "shop_eu"`},
		{"helm: create_namespace not a bool", fe, "create_namespace = true", `create_namespace = "true"`},
		{"helm: values file not a string", fe, `"./values/prod.yaml"`, "3"},
		{"helm: values file outside the config", fe, `"./values/prod.yaml"`, `"/etc/values.yaml"`},
		{"helm: values file listed twice", fe, `"./values/prod.yaml"`, `"values/common.yaml"`},
		{"helm: timeout without a unit", fe, `timeout = "7m30s"`, `timeout = "300"`},
		{"helm: timeout as a number", fe, `timeout = "7m30s"`, `timeout = 300`},
		{"helm: wait not a bool", fe, "wait = true", "wait = 1"},
		{"image: missing image", img, `image = "ghcr.io/acme/api:1.4.2"`, ""},
		{"image: no registry", img, `"ghcr.io/acme/api:1.4.2"`, `"nginx:1.27"`},
		{"image: no tag", img, `"ghcr.io/acme/api:1.4.2"`, `"ghcr.io/acme/api"`},
		{"image: unknown key", img, `name = "api_image"`, "name = \"api_image\"\nsource = \"x\""},
		{"image: plain_http not a bool", img, `name = "api_image"`, "name = \"api_image\"\nplain_http = \"yes\""},
	})
}

// TestActionsAgainstSchema: testdata/actions-app's action files are valid
// against the schema; mistakes the schema can see in them are refused by
// both the schema and Load.
func TestActionsAgainstSchema(t *testing.T) {
	const mig, ping = "actions/migrate.toml", "actions/ping.toml"
	checkAgainstSchema(t, "#/$defs/action_file", withActions, []string{mig, ping}, []schemaMistake{
		{"unknown key", ping, "health = true", "health = true\nretries = 3"},
		{"unknown trigger type", ping, `type = "after"`, `type = "webhook"`},
		{"cron without a schedule", ping, "schedule = \"*/5 * * * *\"\n", ""},
		{"when on a before hook", mig, "continue_on_failure = true", `when = "always"`},
		{"unknown operation", mig, `operation = "provision"`, `operation = "deploy"`},
		{"script and command", mig, `script = "migrate.sh"`, "script = \"migrate.sh\"\ncommand = [\"true\"]"},
		{"neither script nor command", mig, "script = \"migrate.sh\"\n", ""},
		{"timeout without a unit", mig, `timeout = "15m"`, `timeout = "15"`},
		{"bad step name", mig, `name = "check"`, `name = "Check"`},
	})
}

// schemaMistake is a change to one file of a valid config (old replaced by
// new) that the schema can see.
type schemaMistake struct {
	name, file, old, new string
}

// checkAgainstSchema: the files valid of config() are valid against the
// schema's kind (a $defs reference) and its root; each mistake is refused by
// both the schema and Load.
func checkAgainstSchema(t *testing.T, kind string, config func() fstest.MapFS, valid []string, mistakes []schemaMistake) {
	root, kindSchema := compileSchema(t, ""), compileSchema(t, kind)
	for _, name := range valid {
		v := asJSON(t, config()[name].Data)
		if err := kindSchema.Validate(v); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if err := root.Validate(v); err != nil {
			t.Errorf("%s against the root schema: %v", name, err)
		}
	}
	for _, tc := range mistakes {
		t.Run(tc.name, func(t *testing.T) {
			files := config()
			replace(files, tc.file, tc.old, tc.new)
			if err := root.Validate(asJSON(t, files[tc.file].Data)); err == nil {
				t.Errorf("the schema accepts it")
			}
			if _, err := Load(files); err == nil {
				t.Errorf("Load accepts it")
			}
		})
	}
}
