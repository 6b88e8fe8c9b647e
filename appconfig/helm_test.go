package appconfig

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/outpost-dev/outpost/contract"
)

// mixed is base() with a container_image (api_image) and a helm_chart
// (frontend) whose values use the image's, db's and the install's values.
func mixed() fstest.MapFS {
	f := base()
	f["charts/web/Chart.yaml"] = file(`
apiVersion: v2
name: web
version: 0.1.0
appVersion: "1.4.2"
`)
	f["charts/web/values.yaml"] = file("replicaCount: 1\nimage:\n  repository: nginx\n")
	f["charts/web/templates/deployment.yaml"] = file("kind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n")
	f["values/common.yaml"] = file("replicaCount: 2\n")
	f["values/prod.yaml"] = file("# production\nresources:\n  limits:\n    memory: 256Mi\n")
	f["components/api_image.toml"] = file(`
name = "api_image"
type = "container_image"
image = "ghcr.io/acme/api:1.4.2"
`)
	f["components/frontend.toml"] = file(`
name = "frontend"
type = "helm_chart"
source = "charts/web"
namespace = "shop"
create_namespace = true
values_files = ["values/common.yaml", "./values/prod.yaml"]
timeout = "7m30s"
wait = true

[values]
replicaCount = "{{ .install.inputs.region }}"
[values.image]
repository = "{{ .components.api_image.outputs.repository }}"
digest = "{{ .components.api_image.outputs.digest }}"
[values.db]
host = "{{ .components.db.outputs.host }}"
password = "{{ .install.inputs.password }}"
url = "{{ .components.db.outputs.url }}"
port = 5432
[values.ingress]
hosts = ["{{ .install.name }}.example.com", "admin-{{ .install.inputs.password }}.example.com"]
`)
	return f
}

func TestHelmAndImageComponentsLoad(t *testing.T) {
	c := load(t, mixed())
	if got := c.ComponentNames(); !reflect.DeepEqual(got, []string{"api_image", "db", "frontend", "web"}) {
		t.Fatalf("components = %v", got)
	}

	img, _ := c.Component("api_image")
	if img.Type != contract.TypeContainerImage || img.Terraform != nil || img.Helm != nil || img.Image == nil {
		t.Fatalf("api_image = %+v", img)
	}
	wantRef := ImageReference{Registry: "ghcr.io", Repository: "acme/api", Tag: "1.4.2"}
	if img.Image.Image != "ghcr.io/acme/api:1.4.2" || img.Image.PlainHTTP || img.Image.Reference != wantRef {
		t.Errorf("image = %+v", img.Image)
	}
	if got := img.Outputs(); !reflect.DeepEqual(got, []string{"digest", "image", "repository"}) {
		t.Errorf("image outputs = %v", got)
	}

	fe, _ := c.Component("frontend")
	if fe.Type != contract.TypeHelmChart || fe.Helm == nil || fe.Terraform != nil || fe.Image != nil {
		t.Fatalf("frontend = %+v", fe)
	}
	h := fe.Helm
	if h.Source != "charts/web" || h.ReleaseName != "frontend" || h.Namespace != "shop" || !h.CreateNamespace || !h.Wait ||
		h.Timeout != 7*time.Minute+30*time.Second {
		t.Errorf("helm = %+v", h)
	}
	if !reflect.DeepEqual(h.ValuesFiles, []string{"values/common.yaml", "values/prod.yaml"}) {
		t.Errorf("values files = %v", h.ValuesFiles)
	}
	wantChart := &Chart{Dir: "charts/web", APIVersion: "v2", Name: "web", Version: "0.1.0", AppVersion: "1.4.2"}
	if !reflect.DeepEqual(h.Chart, wantChart) {
		t.Errorf("chart = %+v", h.Chart)
	}
	if h.Values["db"].(map[string]any)["port"] != json.Number("5432") {
		t.Errorf("values = %v", h.Values)
	}
	if got := fe.Outputs(); !reflect.DeepEqual(got, []string{"namespace", "objects", "release_name", "revision", "status"}) {
		t.Errorf("helm outputs = %v", got)
	}

	// References imply dependencies across types.
	if len(fe.DeclaredDependencies) != 0 || !reflect.DeepEqual(fe.Dependencies, []string{"api_image", "db"}) {
		t.Errorf("frontend dependencies: declared %v, effective %v", fe.DeclaredDependencies, fe.Dependencies)
	}
	levels, err := c.Graph().Levels()
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{"api_image", "db"}, {"frontend", "web"}}; !reflect.DeepEqual(levels, want) {
		t.Errorf("levels = %v, want %v", levels, want)
	}

	files, err := c.HelmValuesFiles("frontend")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"replicaCount: 2\n", "# production\nresources:\n  limits:\n    memory: 256Mi\n"}; !reflect.DeepEqual(files, want) {
		t.Errorf("values files = %q", files)
	}
	if _, err := c.HelmValuesFiles("db"); err == nil {
		t.Error("values files of a terraform component: no error")
	}

	// The JSON form names the type's settings.
	b, _ := json.Marshal(fe)
	if !strings.Contains(string(b), `"helm":{"source":"charts/web","release_name":"frontend","namespace":"shop"`) {
		t.Errorf("json = %s", b)
	}
}

// TestHelmDefaults: a chart with only a source gets the component's name
// (as a DNS label) as its release, in namespace "default".
func TestHelmDefaults(t *testing.T) {
	f := mixed()
	f["components/frontend.toml"] = file("name = \"web_frontend\"\ntype = \"helm_chart\"\nsource = \"charts/web\"\n")
	c := load(t, f)
	fe, _ := c.Component("web_frontend")
	want := &HelmChart{Source: "charts/web", ReleaseName: "web-frontend", Namespace: "default", Values: map[string]any{},
		ValuesFiles: []string{}, Chart: fe.Helm.Chart}
	if !reflect.DeepEqual(fe.Helm, want) {
		t.Errorf("helm = %+v, want %+v", fe.Helm, want)
	}
	if len(fe.Dependencies) != 0 {
		t.Errorf("dependencies = %v", fe.Dependencies)
	}
}

// TestHelmAndImageProblems: each mistake in a helm_chart or container_image
// component is reported with its file, its key and why.
func TestHelmAndImageProblems(t *testing.T) {
	checkProblems(t, mixed, []problemCase{
		// helm_chart
		{"missing source", func(f fstest.MapFS) { replace(f, "components/frontend.toml", `source = "charts/web"`, "") },
			"components/frontend.toml", "source", "is required"},
		{"source that does not exist", func(f fstest.MapFS) {
			replace(f, "components/frontend.toml", `source = "charts/web"`, `source = "charts/nope"`)
		}, "components/frontend.toml", "source", `directory "charts/nope" does not exist in the config`},
		{"source is a file", func(f fstest.MapFS) {
			replace(f, "components/frontend.toml", `source = "charts/web"`, `source = "charts/web/Chart.yaml"`)
		}, "components/frontend.toml", "source", `"charts/web/Chart.yaml" is a file, not a directory holding a helm chart`},
		{"source without Chart.yaml", func(f fstest.MapFS) {
			replace(f, "components/frontend.toml", `source = "charts/web"`, `source = "modules/web"`)
		}, "components/frontend.toml", "source", `directory "modules/web" holds no Chart.yaml`},
		{"source outside the config", func(f fstest.MapFS) {
			replace(f, "components/frontend.toml", `source = "charts/web"`, `source = "../charts/web"`)
		}, "components/frontend.toml", "source", "outside the config's directory"},
		{"remote source", func(f fstest.MapFS) {
			replace(f, "components/frontend.toml", `source = "charts/web"`, `source = "oci://ghcr.io/acme/web"`)
		}, "components/frontend.toml", "source", "only a directory of the config is supported"},
		{"source of the wrong type", func(f fstest.MapFS) {
			replace(f, "components/frontend.toml", `source = "charts/web"`, `source = ["charts/web"]`)
		}, "components/frontend.toml", "source", "must be a string, not a list"},
		{"Chart.yaml without a version", func(f fstest.MapFS) { replace(f, "charts/web/Chart.yaml", "version: 0.1.0\n", "") },
			"charts/web/Chart.yaml", "version", "is required"},
		{"Chart.yaml without a name", func(f fstest.MapFS) { replace(f, "charts/web/Chart.yaml", "name: web\n", "") },
			"charts/web/Chart.yaml", "name", "is required"},
		{"Chart.yaml version that is a number", func(f fstest.MapFS) { replace(f, "charts/web/Chart.yaml", "version: 0.1.0", "version: 1.0") },
			"charts/web/Chart.yaml", "version", `line 3: must be a string: quote it ("1.0")`},
		{"Chart.yaml version that is not semver", func(f fstest.MapFS) { replace(f, "charts/web/Chart.yaml", "version: 0.1.0", "version: latest") },
			"charts/web/Chart.yaml", "version", `"latest" is not a semantic version`},
		{"Chart.yaml apiVersion", func(f fstest.MapFS) { replace(f, "charts/web/Chart.yaml", "apiVersion: v2", "apiVersion: v3") },
			"charts/web/Chart.yaml", "apiVersion", `"v3" is not a chart API version (v1 or v2)`},
		{"library chart", func(f fstest.MapFS) { appendTo(f, "charts/web/Chart.yaml", "type: library\n") },
			"charts/web/Chart.yaml", "type", "a library chart cannot be deployed"},
		{"Chart.yaml that does not parse", func(f fstest.MapFS) { appendTo(f, "charts/web/Chart.yaml", "x: [\n") },
			"charts/web/Chart.yaml", "", "invalid YAML: line"},
		{"Chart.yaml that is a list", func(f fstest.MapFS) { f["charts/web/Chart.yaml"] = file("- name: web\n") },
			"charts/web/Chart.yaml", "", "must be a YAML mapping (key: value), not a list"},
		{"dependency not vendored", func(f fstest.MapFS) {
			appendTo(f, "charts/web/Chart.yaml", "dependencies:\n  - name: redis\n    version: 1.x\n    repository: https://charts.example.com\n")
		}, "charts/web/Chart.yaml", "dependencies[0]", `chart "redis" is not in charts/web/charts: nothing fetches dependencies`},
		{"bad release name", func(f fstest.MapFS) {
			replace(f, "components/frontend.toml", `namespace = "shop"`, "namespace = \"shop\"\nrelease_name = \"Front_End\"")
		}, "components/frontend.toml", "release_name", `"Front_End" must be 1-53 lowercase letters, digits and '-'`},
		{"release name too long", func(f fstest.MapFS) {
			replace(f, "components/frontend.toml", `namespace = "shop"`, "namespace = \"shop\"\nrelease_name = \""+strings.Repeat("a", 54)+"\"")
		}, "components/frontend.toml", "release_name", "must be 1-53"},
		{"default release name too long", func(f fstest.MapFS) {
			replace(f, "components/frontend.toml", `name = "frontend"`, `name = "`+strings.Repeat("f", 54)+`"`)
		}, "components/frontend.toml", "name", "is longer than a helm release name may be (53 characters): set release_name"},
		{"bad namespace", func(f fstest.MapFS) {
			replace(f, "components/frontend.toml", `namespace = "shop"`, `namespace = "shop.eu"`)
		},
			"components/frontend.toml", "namespace", `"shop.eu" must be 1-63 lowercase letters, digits and '-'`},
		{"two components, one release", func(f fstest.MapFS) {
			f["components/frontend2.toml"] = file("name = \"frontend2\"\ntype = \"helm_chart\"\nsource = \"charts/web\"\nnamespace = \"shop\"\nrelease_name = \"frontend\"\n")
		}, "components/frontend2.toml", "release_name", `release "frontend" in namespace "shop" is already component "frontend"'s (components/frontend.toml)`},
		{"create_namespace not a bool", func(f fstest.MapFS) {
			replace(f, "components/frontend.toml", "create_namespace = true", `create_namespace = "yes"`)
		}, "components/frontend.toml", "create_namespace", `must be true or false, not a string ("yes")`},
		{"values not a table", func(f fstest.MapFS) {
			f["components/frontend.toml"] = file("name = \"frontend\"\ntype = \"helm_chart\"\nsource = \"charts/web\"\nvalues = \"replicaCount: 2\"\n")
		}, "components/frontend.toml", "values", `must be a table, not a string ("replicaCount: 2")`},
		{"values with a date", func(f fstest.MapFS) { appendTo(f, "components/frontend.toml", "since = 2024-01-01\n") },
			"components/frontend.toml", "values.ingress.since", "dates and times are not supported"},
		{"values file that does not exist", func(f fstest.MapFS) {
			replace(f, "components/frontend.toml", `"./values/prod.yaml"`, `"values/staging.yaml"`)
		}, "components/frontend.toml", "values_files[1]", `file "values/staging.yaml" does not exist in the config`},
		{"values file that is a directory", func(f fstest.MapFS) {
			replace(f, "components/frontend.toml", `"./values/prod.yaml"`, `"values"`)
		}, "components/frontend.toml", "values_files[1]", `"values" is a directory, not a YAML values file`},
		{"values file outside the config", func(f fstest.MapFS) {
			replace(f, "components/frontend.toml", `"./values/prod.yaml"`, `"/etc/values.yaml"`)
		}, "components/frontend.toml", "values_files[1]", "must be a file relative to the config's root"},
		{"values file listed twice", func(f fstest.MapFS) {
			replace(f, "components/frontend.toml", `"./values/prod.yaml"`, `"values/common.yaml"`)
		}, "components/frontend.toml", "values_files[1]", `"values/common.yaml" is listed twice`},
		{"values file that is not a string", func(f fstest.MapFS) { replace(f, "components/frontend.toml", `"./values/prod.yaml"`, `3`) },
			"components/frontend.toml", "values_files[1]", "must be a string, not an integer (3)"},
		{"values file that does not parse", func(f fstest.MapFS) { appendTo(f, "values/prod.yaml", "  bad: [\n") },
			"values/prod.yaml", "", "invalid YAML: line"},
		{"values file that is not a mapping", func(f fstest.MapFS) { f["values/prod.yaml"] = file("- a\n- b\n") },
			"values/prod.yaml", "", "must be a YAML mapping (key: value), not a list"},
		{"timeout without a unit", func(f fstest.MapFS) { replace(f, "components/frontend.toml", `timeout = "7m30s"`, `timeout = "300"`) },
			"components/frontend.toml", "timeout", `"300" is not a duration: write a number with a unit, e.g. "90s", "5m" or "1h30m"`},
		{"timeout of zero", func(f fstest.MapFS) { replace(f, "components/frontend.toml", `timeout = "7m30s"`, `timeout = "0s"`) },
			"components/frontend.toml", "timeout", `"0s" must be longer than zero`},
		{"timeout as a number", func(f fstest.MapFS) { replace(f, "components/frontend.toml", `timeout = "7m30s"`, `timeout = 300`) },
			"components/frontend.toml", "timeout", "must be a string, not an integer (300)"},
		{"unknown helm key", func(f fstest.MapFS) {
			replace(f, "components/frontend.toml", `wait = true`, "wait = true\nchart = \"web\"")
		},
			"components/frontend.toml", "chart", `unknown key "chart"`},
		{"terraform key in a helm component", func(f fstest.MapFS) {
			replace(f, "components/frontend.toml", `wait = true`, "wait = true\n[variables]\nx = 1\n")
		}, "components/frontend.toml", "variables", `unknown key "variables" (known keys: name, type, dependencies, source, release_name, namespace, create_namespace, values, values_files, timeout, wait, kubeconfig, relocate_images, images)`},
		{"template in values: unknown input", func(f fstest.MapFS) {
			replace(f, "components/frontend.toml", "{{ .install.inputs.region }}", "{{ .install.inputs.replicas }}")
		}, "components/frontend.toml", "values.replicaCount", `.install.inputs.replicas: no input "replicas" is declared in outpost.toml`},
		{"template in values: syntax error", func(f fstest.MapFS) {
			replace(f, "components/frontend.toml", "{{ .install.name }}.example.com", "{{ .install.name .example.com")
		}, "components/frontend.toml", "values.ingress.hosts[0]", "invalid template: "},
		{"template in values: own outputs", func(f fstest.MapFS) {
			replace(f, "components/frontend.toml", ".components.db.outputs.host", ".components.frontend.outputs.namespace")
		}, "components/frontend.toml", "values.db.host", "a component cannot use its own outputs"},

		{"images without relocate_images", func(f fstest.MapFS) {
			replace(f, "components/frontend.toml", `wait = true`, "wait = true\nimages = [\"docker.io/library/nginx:1.27\"]")
		}, "components/frontend.toml", "images", "lists the images to relocate: set relocate_images = true too"},
		{"listed image without its registry", func(f fstest.MapFS) {
			replace(f, "components/frontend.toml", `wait = true`, "wait = true\nrelocate_images = true\nimages = [\"docker.io/library/nginx:1.27\", \"nginx:1.27\"]")
		}, "components/frontend.toml", "images[1]", `"nginx:1.27" has no registry host: write the reference in full, e.g. "docker.io/library/nginx:1.27"`},
		{"listed image without tag or digest", func(f fstest.MapFS) {
			replace(f, "components/frontend.toml", `wait = true`, "wait = true\nrelocate_images = true\nimages = [\"ghcr.io/acme/web\"]")
		}, "components/frontend.toml", "images[0]", `"ghcr.io/acme/web" has neither tag nor digest`},
		{"image listed twice", func(f fstest.MapFS) {
			replace(f, "components/frontend.toml", `wait = true`, "wait = true\nrelocate_images = true\nimages = [\"ghcr.io/acme/web:1\", \"ghcr.io/acme/web:1\"]")
		}, "components/frontend.toml", "images[1]", `"ghcr.io/acme/web:1" is listed twice`},
		{"relocate_images not a bool", func(f fstest.MapFS) {
			replace(f, "components/frontend.toml", `wait = true`, "wait = true\nrelocate_images = \"yes\"")
		}, "components/frontend.toml", "relocate_images", `must be true or false, not a string ("yes")`},
		{"unknown relocation key", func(f fstest.MapFS) {
			replace(f, "components/frontend.toml", `wait = true`, "wait = true\nrelocate = true")
		}, "components/frontend.toml", "relocate", `unknown key "relocate"`},
		{"kubeconfig not a string", func(f fstest.MapFS) {
			replace(f, "components/frontend.toml", `wait = true`, "wait = true\nkubeconfig = 3")
		},
			"components/frontend.toml", "kubeconfig", "must be a string, not an integer (3)"},
		{"kubeconfig: unknown component", func(f fstest.MapFS) {
			replace(f, "components/frontend.toml", `wait = true`, "wait = true\nkubeconfig = \"{{ .components.cluster.outputs.kubeconfig }}\"")
		}, "components/frontend.toml", "kubeconfig", `no component "cluster"`},

		// container_image
		{"missing image", func(f fstest.MapFS) { replace(f, "components/api_image.toml", `image = "ghcr.io/acme/api:1.4.2"`, "") },
			"components/api_image.toml", "image", "is required"},
		{"image without a registry", func(f fstest.MapFS) {
			replace(f, "components/api_image.toml", `"ghcr.io/acme/api:1.4.2"`, `"nginx:1.27"`)
		}, "components/api_image.toml", "image", `"nginx:1.27" has no registry host: write the reference in full, e.g. "docker.io/library/nginx:1.27" for Docker Hub`},
		{"image without tag or digest", func(f fstest.MapFS) {
			replace(f, "components/api_image.toml", `"ghcr.io/acme/api:1.4.2"`, `"ghcr.io/acme/api"`)
		}, "components/api_image.toml", "image", `"ghcr.io/acme/api" has neither tag nor digest`},
		{"image with a bad digest", func(f fstest.MapFS) {
			replace(f, "components/api_image.toml", `"ghcr.io/acme/api:1.4.2"`, `"ghcr.io/acme/api@sha256:abc"`)
		}, "components/api_image.toml", "image", `the digest "sha256:abc" must be sha256: and 64 lowercase hex digits`},
		{"image with an uppercase repository", func(f fstest.MapFS) {
			replace(f, "components/api_image.toml", `"ghcr.io/acme/api:1.4.2"`, `"ghcr.io/Acme/api:1.4.2"`)
		}, "components/api_image.toml", "image", `repository "Acme/api": each part must be lowercase`},
		{"image with a template", func(f fstest.MapFS) {
			replace(f, "components/api_image.toml", `"ghcr.io/acme/api:1.4.2"`, `"ghcr.io/acme/api:{{ .install.inputs.region }}"`)
		}, "components/api_image.toml", "image", "templates are not supported here"},
		{"image with a scheme", func(f fstest.MapFS) {
			replace(f, "components/api_image.toml", `"ghcr.io/acme/api:1.4.2"`, `"https://ghcr.io/acme/api:1.4.2"`)
		}, "components/api_image.toml", "image", "an image reference has no scheme"},
		{"plain_http not a bool", func(f fstest.MapFS) { appendTo(f, "components/api_image.toml", "plain_http = \"true\"\n") },
			"components/api_image.toml", "plain_http", `must be true or false, not a string ("true")`},
		{"unknown image key", func(f fstest.MapFS) {
			appendTo(f, "components/api_image.toml", "[image_credentials]\nusername = \"x\"\n")
		},
			"components/api_image.toml", "image_credentials", `unknown key "image_credentials" (known keys: name, type, dependencies, image, plain_http)`},
		{"image with variables", func(f fstest.MapFS) { appendTo(f, "components/api_image.toml", "[variables]\nx = 1\n") },
			"components/api_image.toml", "variables", `unknown key "variables"`},

		// References to the new outputs.
		{"unknown image output", func(f fstest.MapFS) {
			replace(f, "components/frontend.toml", ".components.api_image.outputs.digest", ".components.api_image.outputs.tag")
		}, "components/frontend.toml", "values.image.digest",
			`.components.api_image.outputs.tag: component "api_image" (container_image) has no output "tag" (outputs: "digest", "image", "repository")`},
		{"field of an image output", func(f fstest.MapFS) {
			replace(f, "components/frontend.toml", ".components.api_image.outputs.digest", ".components.api_image.outputs.digest.hex")
		}, "components/frontend.toml", "values.image.digest", `output "digest" of component "api_image" (container_image) is a string, it has no fields`},
		{"unknown helm output", func(f fstest.MapFS) {
			appendTo(f, "components/web.toml", "replicas = \"{{ .components.frontend.outputs.url }}\"\n")
		}, "components/web.toml", "variables.replicas",
			`.components.frontend.outputs.url: component "frontend" (helm_chart) has no output "url" (outputs: "namespace", "objects", "release_name", "revision", "status")`},
		{"index into a helm output", func(f fstest.MapFS) {
			appendTo(f, "components/web.toml", "replicas = '{{ index .components.frontend.outputs \"revision\" \"x\" }}'\n")
		}, "components/web.toml", "variables.replicas", `output "revision" of component "frontend" (helm_chart) is a number, it has no fields`},
	})
}

// TestHelmNoEchoes: a chart or values file shared by several components is
// reported once, on the file, and once per component that names it.
func TestHelmNoEchoes(t *testing.T) {
	f := mixed()
	f["components/frontend2.toml"] = file("name = \"frontend2\"\ntype = \"helm_chart\"\nsource = \"charts/web\"\nvalues_files = [\"values/prod.yaml\"]\n")
	appendTo(f, "values/prod.yaml", "x: [\n")
	replace(f, "charts/web/Chart.yaml", "version: 0.1.0\n", "")
	ps := problemsOf(t, f)
	want := Problems{
		{"charts/web/Chart.yaml", "version", "is required"},
		{"values/prod.yaml", "", ps[1].Message},
	}
	if !reflect.DeepEqual(ps, want) || !strings.HasPrefix(ps[1].Message, "invalid YAML: line 5:") {
		t.Errorf("problems:\n%v\nwant\n%v", ps, want)
	}
}

// TestHelmChartDependencies: a dependency vendored in charts/, as a
// directory or an archive, is accepted.
func TestHelmChartDependencies(t *testing.T) {
	f := mixed()
	appendTo(f, "charts/web/Chart.yaml", `dependencies:
  - name: redis
    version: 17.x
    repository: https://charts.example.com
  - name: common
    version: 1.0.0
    repository: file://../common
`)
	f["charts/web/charts/redis-17.3.1.tgz"] = file("not really a chart archive")
	f["charts/web/charts/lib/Chart.yaml"] = file("apiVersion: v2\nname: common\nversion: 1.0.0\ntype: library\n")
	c := load(t, f)
	fe, _ := c.Component("frontend")
	if !reflect.DeepEqual(fe.Helm.Chart.Dependencies, []string{"redis", "common"}) {
		t.Errorf("dependencies = %v", fe.Helm.Chart.Dependencies)
	}
}

// TestCycleAcrossTypes: a cycle through a helm chart, an image and a
// terraform module is refused and named, with how each edge arises.
func TestCycleAcrossTypes(t *testing.T) {
	f := mixed()
	// frontend → api_image (template), api_image → web (declared),
	// web → frontend (template in a terraform variable).
	replace(f, "components/api_image.toml", `name = "api_image"`, "name = \"api_image\"\ndependencies = [\"web\"]")
	appendTo(f, "components/web.toml", "replicas = \"{{ .components.frontend.outputs.revision }}\"\n")
	ps := problemsOf(t, f)
	want := Problems{{"components/api_image.toml", "dependencies",
		"dependency cycle api_image → web → frontend → api_image (api_image → web: dependencies; web → frontend: template in variables.replicas; frontend → api_image: template in values.image.digest)"}}
	if !reflect.DeepEqual(ps, want) {
		t.Fatalf("problems:\n%v\nwant\n%v", ps, want)
	}
}

// helmData is what the control plane has once db, api_image and the
// sandbox are deployed.
func helmData(t *testing.T, c *Config) Data {
	t.Helper()
	inputs, err := c.ResolveInputs(map[string]string{"password": "hunter2"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return Data{InstallID: "ins_1", InstallName: "acme", Inputs: inputs,
		Components: map[string]map[string]Value{
			"db":        {"host": {Value: "db.internal"}, "url": {Value: "postgres://x"}},
			"api_image": ImageOutputValues("registry.acme.internal/shop/api", "sha256:"+strings.Repeat("ab", 32)),
		}}
}

func TestRenderHelmValues(t *testing.T) {
	c := load(t, mixed())
	r, err := c.RenderHelmValues("frontend", helmData(t, c))
	if err != nil {
		t.Fatal(err)
	}
	var got any
	if err := json.Unmarshal(r.Values, &got); err != nil {
		t.Fatal(err)
	}
	digest := "sha256:" + strings.Repeat("ab", 32)
	want := map[string]any{
		"replicaCount": "eu",
		"image":        map[string]any{"repository": "registry.acme.internal/shop/api", "digest": digest},
		"db":           map[string]any{"host": "db.internal", "password": "hunter2", "url": "postgres://x", "port": float64(5432)},
		"ingress":      map[string]any{"hosts": []any{"acme.example.com", "admin-hunter2.example.com"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("values:\n got %v\nwant %v", got, want)
	}
	// The password input is sensitive; db's url output is, as its module
	// declares it.
	if want := []string{"values.db.password", "values.db.url", "values.ingress.hosts[1]"}; !reflect.DeepEqual(r.Sensitive, want) {
		t.Errorf("sensitive = %v, want %v", r.Sensitive, want)
	}
	if !r.IsSensitive("values.db.password") || r.IsSensitive("values.db.host") || r.IsSensitive("values.db") {
		t.Error("IsSensitive")
	}

	red := r.Redacted()
	for _, secret := range []string{"hunter2", "postgres://x"} {
		if strings.Contains(string(red.Values), secret) {
			t.Errorf("redacted values show %q: %s", secret, red.Values)
		}
	}
	if !strings.Contains(string(red.Values), `"host":"db.internal"`) || !strings.Contains(string(red.Values), `"hosts":["acme.example.com","(sensitive)"]`) {
		t.Errorf("redacted = %s", red.Values)
	}
	if strings.Contains(string(r.Values), "(sensitive)") {
		t.Error("Redacted changed the original")
	}
	if got, want := r.Secrets(), []string{"admin-hunter2.example.com", "postgres://x", "hunter2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("secrets = %q, want %q", got, want)
	}
}

// TestHelmKubeconfig: a chart's kubeconfig template reads a component's
// output, which makes the chart depend on that component; with none, the
// sandbox's cluster is meant ("" rendered).
func TestHelmKubeconfig(t *testing.T) {
	f := mixed()
	c := load(t, f)
	if kc, err := c.RenderHelmKubeconfig("frontend", helmData(t, c)); err != nil || kc != "" {
		t.Fatalf("no kubeconfig key: %q, %v; want \"\" (the sandbox's)", kc, err)
	}
	replace(f, "components/frontend.toml", `wait = true`, "wait = true\nkubeconfig = \"{{ .components.db.outputs.url }}\"")
	c = load(t, f)
	fe, _ := c.Component("frontend")
	if !slices.Contains(fe.Dependencies, "db") {
		t.Errorf("dependencies %v: the kubeconfig template reads db's output", fe.Dependencies)
	}
	d := helmData(t, c)
	if kc, err := c.RenderHelmKubeconfig("frontend", d); err != nil || kc != "postgres://x" {
		t.Errorf("rendered %q, %v; want db's url", kc, err)
	}
	d.Components["db"]["url"] = Value{Value: ""}
	if _, err := c.RenderHelmKubeconfig("frontend", d); err == nil || !strings.Contains(err.Error(), "kubeconfig: rendered an empty string") {
		t.Errorf("an empty kubeconfig: %v", err)
	}
}

// TestRenderHelmValuesWholeValue: a template that is one reference keeps
// the referenced value's type, and a sensitive map is sensitive as a whole.
func TestRenderHelmValuesWholeValue(t *testing.T) {
	f := mixed()
	replace(f, "outpost.toml", "[[inputs]]", "[[inputs]]\nname = \"labels\"\ntype = \"map\"\nsensitive = true\n\n[[inputs]]\nname = \"replicas\"\ntype = \"number\"\ndefault = 3\n\n[[inputs]]")
	f["components/frontend.toml"] = file(`
name = "frontend"
type = "helm_chart"
source = "charts/web"
[values]
replicaCount = "{{ .install.inputs.replicas }}"
podLabels = "{{ .install.inputs.labels }}"
revision = "{{ .components.other.outputs.revision }}"
`)
	f["components/other.toml"] = file("name = \"other\"\ntype = \"helm_chart\"\nsource = \"charts/web\"\n")
	c := load(t, f)
	inputs, err := c.ResolveInputs(map[string]string{"password": "pw", "labels": `{"team":"core"}`}, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := Data{Inputs: inputs, Components: map[string]map[string]Value{"other": HelmOutputValues("other", "default", 4, "deployed", nil)}}
	r, err := c.RenderHelmValues("frontend", d)
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Values) != `{"podLabels":{"team":"core"},"replicaCount":3,"revision":4}` {
		t.Errorf("values = %s", r.Values)
	}
	if !reflect.DeepEqual(r.Sensitive, []string{"values.podLabels"}) || !r.IsSensitive("values.podLabels.team") {
		t.Errorf("sensitive = %v", r.Sensitive)
	}
	if got := string(r.Redacted().Values); got != `{"podLabels":"(sensitive)","replicaCount":3,"revision":4}` {
		t.Errorf("redacted = %s", got)
	}
	if got := r.Secrets(); !reflect.DeepEqual(got, []string{`{"team":"core"}`}) {
		t.Errorf("secrets = %q", got)
	}
}

func TestRenderHelmValuesErrors(t *testing.T) {
	c := load(t, mixed())
	d := helmData(t, c)
	delete(d.Components, "api_image")
	_, err := c.RenderHelmValues("frontend", d)
	var ps Problems
	if !errors.As(err, &ps) || len(ps) != 2 || ps[0] != (Problem{"components/frontend.toml", "values.image.digest",
		`component "api_image" has no output "digest" (is it deployed?)`}) {
		t.Fatalf("render before api_image is built: %v", err)
	}
	if _, err := c.RenderHelmValues("db", d); err == nil || !strings.Contains(err.Error(), "not a helm chart") {
		t.Errorf("helm values of a terraform component: %v", err)
	}
	if _, err := c.RenderHelmValues("nope", d); err == nil {
		t.Error("helm values of no component: no error")
	}
	if _, err := c.RenderComponent("frontend", d); err == nil || !strings.Contains(err.Error(), "is a helm_chart, not a terraform module") {
		t.Errorf("terraform rendering of a helm component: %v", err)
	}
}

// TestTerraformUsesNewOutputs: a terraform component may use a helm
// release's and an image's outputs; they render with their types.
func TestTerraformUsesNewOutputs(t *testing.T) {
	f := mixed()
	appendTo(f, "components/web.toml", "replicas = \"{{ .components.frontend.outputs.revision }}\"\n")
	replace(f, "components/web.toml", `db_host = "{{ .components.db.outputs.host }}"`,
		`db_host = "{{ .components.frontend.outputs.release_name }}.{{ .components.frontend.outputs.namespace }} {{ .components.frontend.outputs.status }} {{ .components.api_image.outputs.image }}"`)
	c := load(t, f)
	web, _ := c.Component("web")
	if !reflect.DeepEqual(web.Dependencies, []string{"api_image", "frontend"}) {
		t.Errorf("web dependencies = %v", web.Dependencies)
	}
	d := helmData(t, c)
	d.Components["frontend"] = HelmOutputValues("frontend", "shop", 2, "deployed", []string{"Service/shop/frontend"})
	r, err := c.RenderComponent("web", d)
	if err != nil {
		t.Fatal(err)
	}
	want := `"frontend.shop deployed registry.acme.internal/shop/api@sha256:` + strings.Repeat("ab", 32) + `"`
	if string(r.Variables["db_host"]) != want || string(r.Variables["replicas"]) != "2" || len(r.Sensitive) != 0 {
		t.Errorf("rendered = %s %s %v", r.Variables["db_host"], r.Variables["replicas"], r.Sensitive)
	}
}

// TestHelmImagesToRelocate: relocate_images and its list of images load as
// written; without them, nothing is relocated.
func TestHelmImagesToRelocate(t *testing.T) {
	f := mixed()
	if h := mustHelm(t, f); h.RelocateImages || len(h.Images) != 0 {
		t.Errorf("by default: relocate %v, images %v", h.RelocateImages, h.Images)
	}
	replace(f, "components/frontend.toml", `wait = true`,
		"wait = true\nrelocate_images = true\nimages = [\"docker.io/library/nginx:1.27\", \"ghcr.io/acme/init@sha256:"+strings.Repeat("ab", 32)+"\"]")
	h := mustHelm(t, f)
	want := []string{"docker.io/library/nginx:1.27", "ghcr.io/acme/init@sha256:" + strings.Repeat("ab", 32)}
	if !h.RelocateImages || !reflect.DeepEqual(h.Images, want) {
		t.Errorf("relocate %v, images %v; want true, %v", h.RelocateImages, h.Images, want)
	}
}

func mustHelm(t *testing.T, f fstest.MapFS) *HelmChart {
	t.Helper()
	fe, _ := load(t, f).Component("frontend")
	return fe.Helm
}
