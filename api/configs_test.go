package api

import (
	"bytes"
	"encoding/json"
	"github.com/outpost-dev/outpost/api/wire"
	"io"
	"io/fs"
	"maps"
	"mime/multipart"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/store"
)

// exampleFiles are the files of examples/demo-app, to change in a test.
func exampleFiles(t *testing.T) fstest.MapFS {
	t.Helper()
	root := os.DirFS("../examples/demo-app")
	files := fstest.MapFS{}
	err := fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(root, p)
		files[p] = &fstest.MapFile{Data: data, Mode: 0o644}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func tarGz(t *testing.T, files fs.FS) []byte {
	t.Helper()
	b, err := appconfig.ArchiveDir(files, ".")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// postConfig sends a config body with its content type.
func (e *testEnv) postConfig(appID, contentType string, body io.Reader) response {
	e.t.Helper()
	req, err := http.NewRequest("POST", e.http.URL+"/v1/apps/"+appID+"/configs", body)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer "+e.token)
	return e.do(req)
}

func (e *testEnv) syncConfig(appID string, files fs.FS, want int) wire.SyncedAppConfig {
	e.t.Helper()
	res := e.postConfig(appID, "application/gzip", bytes.NewReader(tarGz(e.t, files)))
	if res.status != want {
		e.t.Fatalf("sync config: got %s, want %d", res, want)
	}
	var v wire.SyncedAppConfig
	if err := json.Unmarshal(res.body, &v); err != nil {
		e.t.Fatal(err)
	}
	return v
}

type componentSummary struct {
	Type string
	Deps []string
}

func (e *testEnv) componentsOf(appID string) map[string]componentSummary {
	e.t.Helper()
	var list struct{ Components []store.Component }
	e.call("GET", "/v1/apps/"+appID+"/components", nil, 200, &list)
	out := map[string]componentSummary{}
	for _, c := range list.Components {
		out[c.Name] = componentSummary{c.Type, c.Dependencies}
	}
	return out
}

// demoDescription is the app description of examples/demo-app/outpost.toml.
const demoDescription = "Demo app: a sandbox, four terraform components in a diamond (network → database, cache → api), a local cluster and a helm chart in it (web)"

func TestSyncExampleConfig(t *testing.T) {
	e := newTestEnv(t)
	var app store.App
	e.call("POST", "/v1/apps", map[string]any{"name": "demo"}, 201, &app)

	v := e.syncConfig(app.ID, exampleFiles(t), 201)
	if v.Version != 1 || v.Created == nil || !*v.Created || v.App.Name != "demo" || v.App.Description != demoDescription {
		t.Fatalf("sync answer = %+v", v)
	}
	wantComponents := map[string]componentSummary{
		"network":  {"terraform_module", []string{}},
		"database": {"terraform_module", []string{"network"}},
		"cache":    {"terraform_module", []string{"network"}},
		"api":      {"terraform_module", []string{"cache", "database", "network"}},
		"cluster":  {"terraform_module", []string{}},
		"web":      {"helm_chart", []string{"api", "cluster"}},
	}
	got := map[string]componentSummary{}
	for _, c := range v.Components {
		got[c.Name] = componentSummary{c.Type, c.Dependencies}
	}
	if !reflect.DeepEqual(got, wantComponents) {
		t.Errorf("answer's components = %v, want %v", got, wantComponents)
	}
	if want := [][]string{{"cluster", "network"}, {"cache", "database"}, {"api"}, {"web"}}; !reflect.DeepEqual(v.Levels, want) {
		t.Errorf("levels = %v, want %v", v.Levels, want)
	}
	// The app's components are the config's.
	if got := e.componentsOf(app.ID); !reflect.DeepEqual(got, wantComponents) {
		t.Errorf("app components = %v, want %v", got, wantComponents)
	}
	var a store.App
	e.call("GET", "/v1/apps/"+app.ID, nil, 200, &a)
	if a.Description != demoDescription {
		t.Errorf("app description = %q, want the config's, %q", a.Description, demoDescription)
	}

	// Reading it back: by number and as latest.
	var byNumber, latest wire.SyncedAppConfig
	e.call("GET", "/v1/apps/"+app.ID+"/configs/1", nil, 200, &byNumber)
	e.call("GET", "/v1/apps/"+app.ID+"/configs/latest", nil, 200, &latest)
	if byNumber.Version != 1 || !reflect.DeepEqual(byNumber, latest) {
		t.Errorf("configs/1 = %+v, latest = %+v", byNumber, latest)
	}
	for _, f := range []string{"outpost.toml", "components/api.toml", "modules/database/main.tf", "sandbox/main.tf",
		"components/web.toml", "charts/web/Chart.yaml", "charts/web/values.yaml"} {
		if !strings.Contains(strings.Join(byNumber.Files, " "), f) {
			t.Errorf("files %v lack %s", byNumber.Files, f)
		}
	}
	for _, in := range byNumber.Inputs {
		if in.Name == "db_password" && (!in.Sensitive || in.Default != nil) {
			t.Errorf("db_password = %+v", in)
		}
		if in.Name == "api_replicas" && in.Default != float64(2) {
			t.Errorf("api_replicas default = %#v", in.Default)
		}
	}

	// The demo's actions (by name: health, hello, migrate, warm_cache): hello's
	// trigger, input and step; migrate's hook before api's deploy; the runbook.
	wantAction := wire.ConfigAction{Name: "hello", File: "actions/hello.toml", Description: "Greet someone, and say where the API is",
		TimeoutSeconds: 60, Triggers: []wire.ConfigActionTrigger{{Type: "manual"}},
		Inputs: []wire.ConfigInput{{Name: "name", Type: "string", Default: "world", Description: "Who to greet"}}, Steps: []string{"greet"}}
	if len(byNumber.Actions) != 4 || !reflect.DeepEqual(byNumber.Actions[1], wantAction) {
		t.Errorf("actions = %+v, want 4, hello %+v", byNumber.Actions, wantAction)
	} else if hook := byNumber.Actions[2].Triggers[1]; byNumber.Actions[2].Name != "migrate" || hook.Type != "before" ||
		hook.Operation != "deploy_component" || hook.Component != "api" {
		t.Errorf("migrate = %+v, want a hook before api's deploy", byNumber.Actions[2])
	}
	if len(byNumber.Runbooks) != 1 || byNumber.Runbooks[0].Name != "upgrade" || len(byNumber.Runbooks[0].Steps) != 4 {
		t.Errorf("runbooks = %+v, want upgrade's four steps", byNumber.Runbooks)
	}

	// The same config again: no new version.
	again := e.syncConfig(app.ID, exampleFiles(t), 200)
	if again.Version != 1 || again.Created == nil || *again.Created {
		t.Errorf("second sync of the same config = %+v", again)
	}

	// Without the cache: version 2, cache deleted, api no longer needs it
	// (web, after api, is unchanged).
	files := exampleFiles(t)
	delete(files, "components/cache.toml")
	replaceIn(t, files, "components/api.toml", `dependencies = ["database", "cache"]`, `dependencies = ["database"]`)
	replaceIn(t, files, "components/api.toml", `cache_endpoint = "{{ .components.cache.outputs.endpoint }}"`, `cache_endpoint = ""`)
	v2 := e.syncConfig(app.ID, files, 201)
	if v2.Version != 2 {
		t.Errorf("version = %d, want 2", v2.Version)
	}
	delete(wantComponents, "cache")
	wantComponents["api"] = componentSummary{"terraform_module", []string{"database", "network"}}
	if got := e.componentsOf(app.ID); !reflect.DeepEqual(got, wantComponents) {
		t.Errorf("components after v2 = %v, want %v", got, wantComponents)
	}
	var list struct {
		Configs []struct{ Version int }
	}
	e.call("GET", "/v1/apps/"+app.ID+"/configs", nil, 200, &list)
	if len(list.Configs) != 2 || list.Configs[0].Version != 2 || list.Configs[1].Version != 1 {
		t.Errorf("versions = %+v", list.Configs)
	}
	// The stored archive is what the workflows load.
	ac, err := e.store.LatestAppConfig(t.Context(), e.org.ID, app.ID)
	if err != nil {
		t.Fatal(err)
	}
	archive, _ := ac.Archive()
	cfg, err := appconfig.FromArchive(archive)
	if err != nil || ac.Version != 2 || len(cfg.Components) != len(demoComponents)-1 {
		t.Fatalf("latest config: v%d %v, %v", ac.Version, cfg, err)
	}
}

func replaceIn(t *testing.T, files fstest.MapFS, name, old, new string) {
	t.Helper()
	s := string(files[name].Data)
	if !strings.Contains(s, old) {
		t.Fatalf("%s does not contain %q", name, old)
	}
	files[name] = &fstest.MapFile{Data: []byte(strings.Replace(s, old, new, 1)), Mode: 0o644}
}

// TestSyncInvalidConfig: each kind of mistake answers 422 naming the file,
// the key and why, and leaves everything as it was: the previous config
// stays in force.
func TestSyncInvalidConfig(t *testing.T) {
	e := newTestEnv(t)
	var app store.App
	e.call("POST", "/v1/apps", map[string]any{"name": "demo"}, 201, &app)
	e.syncConfig(app.ID, exampleFiles(t), 201)
	before := e.snapshot()

	cases := []struct {
		name            string
		change          func(t *testing.T, f fstest.MapFS)
		file, key, want string
	}{
		{"unknown key", func(t *testing.T, f fstest.MapFS) {
			replaceIn(t, f, "components/cache.toml", "source =", "sorce = \"x\"\nsource =")
		}, "components/cache.toml", "sorce", `unknown key "sorce" (did you mean "source"?)`},
		{"wrong type", func(t *testing.T, f fstest.MapFS) {
			replaceIn(t, f, "components/cache.toml", `dependencies = ["network"]`, `dependencies = "network"`)
		}, "components/cache.toml", "dependencies", "must be a list of strings"},
		{"wrong input type", func(t *testing.T, f fstest.MapFS) {
			replaceIn(t, f, "outpost.toml", "sensitive = true", `sensitive = "yes"`)
		}, "outpost.toml", "inputs[1].sensitive", "must be true or false"},
		{"unknown component type", func(t *testing.T, f fstest.MapFS) {
			replaceIn(t, f, "components/cache.toml", `type = "terraform_module"`, `type = "redis"`)
		}, "components/cache.toml", "type", `unknown component type "redis"`},
		{"docker_build FROM without a registry host", func(t *testing.T, f fstest.MapFS) {
			f["components/web.toml"] = &fstest.MapFile{Data: []byte("name = \"web\"\ntype = \"docker_build\"\ncontext = \"web\"\n")}
			f["web/Dockerfile"] = &fstest.MapFile{Data: []byte("FROM node:22 AS build\nFROM scratch\n")}
		}, "web/Dockerfile", "FROM", `line 1: "node:22" has no registry host: write the reference in full`},
		{"docker_build syntax error", func(t *testing.T, f fstest.MapFS) {
			f["components/web.toml"] = &fstest.MapFile{Data: []byte("name = \"web\"\ntype = \"docker_build\"\ncontext = \"web\"\n")}
			f["web/Dockerfile"] = &fstest.MapFile{Data: []byte("FROM scratch\nCOPY\n")}
		}, "web/Dockerfile", "", `line 2: COPY requires at least two arguments`},
		{"missing source", func(t *testing.T, f fstest.MapFS) { delete(f, "modules/cache/main.tf") },
			"components/cache.toml", "source", `directory "modules/cache" does not exist in the config`},
		{"duplicate names", func(t *testing.T, f fstest.MapFS) { f["components/cache2.toml"] = f["components/cache.toml"] },
			"components/cache2.toml", "name", `component "cache" is already defined in components/cache.toml`},
		{"unknown dependency", func(t *testing.T, f fstest.MapFS) {
			replaceIn(t, f, "components/cache.toml", `dependencies = ["network"]`, `dependencies = ["network", "queue"]`)
		}, "components/cache.toml", "dependencies[1]", `no component "queue"`},
		{"dependency cycle", func(t *testing.T, f fstest.MapFS) {
			replaceIn(t, f, "components/network.toml", `source =`, "dependencies = [\"api\"]\nsource =")
		}, "components/api.toml", "dependencies",
			"dependency cycle api → cache → network → api (api → cache: dependencies; cache → network: dependencies; network → api: dependencies)"},
		{"dependency cycle through a template", func(t *testing.T, f fstest.MapFS) {
			replaceIn(t, f, "components/network.toml", `"{{ .sandbox.outputs.cluster_name }}"`, `"{{ .components.api.outputs.url }}"`)
		}, "components/api.toml", "dependencies",
			"dependency cycle api → cache → network → api (api → cache: dependencies; cache → network: dependencies; network → api: template in variables.cluster_name)"},
		{"unknown input", func(t *testing.T, f fstest.MapFS) {
			replaceIn(t, f, "components/cache.toml", ".install.inputs.cache_enabled", ".install.inputs.cache_on")
		}, "components/cache.toml", "variables.enabled", `no input "cache_on" is declared in outpost.toml`},
		{"unknown component", func(t *testing.T, f fstest.MapFS) {
			replaceIn(t, f, "components/api.toml", ".components.cache.outputs", ".components.redis.outputs")
		}, "components/api.toml", "variables.cache_endpoint", `no component "redis"`},
		{"unknown component output", func(t *testing.T, f fstest.MapFS) {
			replaceIn(t, f, "components/api.toml", ".components.database.outputs.url", ".components.database.outputs.dsn")
		}, "components/api.toml", "variables.database_url", `component "database" (module modules/database) has no output "dsn" (outputs: "data_dir", "host", "port", "url")`},
		{"unknown sandbox output", func(t *testing.T, f fstest.MapFS) {
			replaceIn(t, f, "components/network.toml", ".sandbox.outputs.vpc_cidr", ".sandbox.outputs.cidr")
		}, "components/network.toml", "variables.vpc_cidr", `the sandbox module (sandbox) has no output "cidr"`},
		{"env var the runner sets itself", func(t *testing.T, f fstest.MapFS) {
			replaceIn(t, f, "components/api.toml", "[env_vars]", "[env_vars]\nTF_CLI_CONFIG_FILE = \"/etc/mirror.tfrc\"")
		}, "components/api.toml", "env_vars.TF_CLI_CONFIG_FILE", "the runner sets TF_CLI_CONFIG_FILE itself: the runner gives terraform its own CLI configuration"},
		{"sandbox env var the runner sets itself", func(t *testing.T, f fstest.MapFS) {
			replaceIn(t, f, "outpost.toml", "[sandbox.variables]", "[sandbox.env_vars]\nTF_HTTP_ADDRESS = \"http://state\"\n[sandbox.variables]")
		}, "outpost.toml", "sandbox.env_vars.TF_HTTP_ADDRESS", "the runner sets TF_HTTP_ADDRESS itself: terraform's state backend is the control plane's"},
		{"env var of the runner's own", func(t *testing.T, f fstest.MapFS) {
			replaceIn(t, f, "components/api.toml", "[env_vars]", "[env_vars]\nOUTPOST_KUBE_ASSETS = \"/opt/kube\"")
		}, "components/api.toml", "env_vars.OUTPOST_KUBE_ASSETS", "the runner sets OUTPOST_KUBE_ASSETS itself: OUTPOST_* are the runner's own settings"},
		{"chart image to relocate without its registry", func(t *testing.T, f fstest.MapFS) {
			replaceIn(t, f, "components/web.toml", "create_namespace = true", "create_namespace = true\nrelocate_images = true\nimages = [\"nginx:1.27\"]")
		}, "components/web.toml", "images[0]", `"nginx:1.27" has no registry host: write the reference in full, e.g. "docker.io/library/nginx:1.27"`},
		{"unknown chart image key", func(t *testing.T, f fstest.MapFS) {
			replaceIn(t, f, "components/web.toml", "create_namespace = true", "create_namespace = true\nrelocate_image = true")
		}, "components/web.toml", "relocate_image", `unknown key "relocate_image" (did you mean "relocate_images"?)`},
		{"unknown action in a template", func(t *testing.T, f fstest.MapFS) {
			replaceIn(t, f, "components/api.toml", "[env_vars]", "[env_vars]\nSCHEMA = \"{{ .actions.migrations.outputs.version }}\"")
		}, "components/api.toml", "env_vars.SCHEMA", `.actions.migrations.outputs.version: no action "migrations" (actions: "health", "hello", "migrate", "warm_cache")`},
		{"another app's config", func(t *testing.T, f fstest.MapFS) {
			replaceIn(t, f, "outpost.toml", `name = "demo"`, `name = "shop"`)
		}, "outpost.toml", "app.name", `the config is for app "shop", but app ` + app.ID + ` is "demo"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := e.with(t)
			files := exampleFiles(t)
			tc.change(t, files)
			res := e.postConfig(app.ID, "application/gzip", bytes.NewReader(tarGz(t, files)))
			if res.status != 422 {
				t.Fatalf("got %s, want 422", res)
			}
			var body wire.InvalidConfig
			if err := json.Unmarshal(res.body, &body); err != nil {
				t.Fatal(err)
			}
			found := false
			for _, p := range body.Errors {
				found = found || (p.File == tc.file && p.Key == tc.key && strings.Contains(p.Message, tc.want))
			}
			if !found || body.Code != "invalid_config" || body.Message == "" {
				t.Fatalf("want an error at %s %q containing %q; got %s", tc.file, tc.key, tc.want, res.body)
			}
			if after := e.snapshot(); !reflect.DeepEqual(after, before) {
				t.Fatalf("a refused config changed the database")
			}
		})
	}
	var latest wire.SyncedAppConfig
	e.call("GET", "/v1/apps/"+app.ID+"/configs/latest", nil, 200, &latest)
	if latest.Version != 1 || len(latest.Components) != len(demoComponents) {
		t.Fatalf("config in force after refusals: %+v", latest)
	}
}

func TestSyncConfigBodies(t *testing.T) {
	e := newTestEnv(t)
	var app store.App
	e.call("POST", "/v1/apps", map[string]any{"name": "demo"}, 201, &app)
	_, otherToken, err := e.store.CreateOrg(t.Context(), "other")
	if err != nil {
		t.Fatal(err)
	}
	before := e.snapshot()

	check := func(res response, status int, contains string) {
		t.Helper()
		if res.status != status || !strings.Contains(string(res.body), contains) {
			t.Errorf("got %s, want %d with %q", res, status, contains)
		}
	}
	good := tarGz(t, exampleFiles(t))
	check(e.postConfig(app.ID, "application/json", strings.NewReader(`{}`)), 415, "gzipped tar")
	check(e.postConfig(app.ID, "application/gzip", strings.NewReader("not gzip")), 400, "not gzip data")
	check(e.postConfig(app.ID, "application/gzip", bytes.NewReader(testutil.TarGz(t, map[string]string{"../escape.tf": "x"}))), 400, "is not a path inside the config")
	check(e.postConfig(app.ID, "application/gzip", bytes.NewReader(testutil.TarGz(t, map[string]string{"README.md": "x"}))), 422, "outpost.toml")
	// Too large: said by Content-Length, or found while reading a chunked
	// body.
	check(e.postConfig(app.ID, "application/gzip", bytes.NewReader(make([]byte, MaxConfigBytes+1))), 413, "too_large")
	check(e.postConfig(app.ID, "application/gzip", io.LimitReader(zeros{}, MaxConfigBytes+1)), 413, "too_large")
	// Another org's app, or none, is not found.
	res := e.with(t)
	res.token = otherToken
	check(res.postConfig(app.ID, "application/gzip", bytes.NewReader(good)), 404, "not_found")
	res.callAs(otherToken, "GET", "/v1/apps/"+app.ID+"/configs", nil, 404, nil)
	check(e.postConfig("app_missing", "application/gzip", bytes.NewReader(good)), 404, "not_found")
	if after := e.snapshot(); !reflect.DeepEqual(after, before) {
		t.Fatal("a refused body changed the database")
	}
	e.call("GET", "/v1/apps/"+app.ID+"/configs/latest", nil, 404, nil)
	e.call("GET", "/v1/apps/"+app.ID+"/configs/1", nil, 404, nil)
	e.call("GET", "/v1/apps/"+app.ID+"/configs/first", nil, 400, nil)

	// multipart/form-data, one part per file named by its path.
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	files := exampleFiles(t)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		w, err := mw.CreateFormFile(name, name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(files[name].Data)
	}
	mw.Close()
	res2 := e.postConfig(app.ID, mw.FormDataContentType(), &body)
	check(res2, 201, `"version":1`)
	// The same files as a tarball are the same config.
	check(e.postConfig(app.ID, "application/x-tar+gzip", bytes.NewReader(good)), 200, `"created":false`)
	res.callAs(otherToken, "GET", "/v1/apps/"+app.ID+"/configs/1", nil, 404, nil)
}

// TestConfigRoutesDocumented: the OpenAPI document says what the sync route
// takes and how it refuses a config.
func TestConfigRoutesDocumented(t *testing.T) {
	e := newTestEnv(t)
	var doc struct {
		Paths map[string]map[string]struct {
			RequestBody struct {
				Content map[string]any
			}
			Responses map[string]struct {
				Content map[string]struct {
					Schema struct {
						Ref string `json:"$ref"`
					}
				}
			}
		}
	}
	e.call("GET", "/v1/openapi.json", nil, 200, &doc)
	op := doc.Paths["/v1/apps/{id}/configs"]["post"]
	for _, ct := range []string{"application/gzip", "multipart/form-data"} {
		if _, ok := op.RequestBody.Content[ct]; !ok {
			t.Errorf("sync route does not document %s bodies: %v", ct, op.RequestBody.Content)
		}
	}
	if ref := op.Responses["422"].Content["application/json"].Schema.Ref; ref != "#/components/schemas/InvalidConfig" {
		t.Errorf("422 schema = %q", ref)
	}
	for _, code := range []string{"201", "400", "404", "413", "415"} {
		if _, ok := op.Responses[code]; !ok {
			t.Errorf("sync route does not document %s", code)
		}
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
