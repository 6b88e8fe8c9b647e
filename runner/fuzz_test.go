package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/plugins"
	"github.com/outpost-dev/outpost/runner/plugins/helm"
)

// manifestTypes are the job types whose manifests FuzzJobManifest decodes,
// with the manifest's type, in a fixed order (the fuzz input picks one by
// index).
var manifestTypes = []struct {
	job      string
	new      plugins.Factory
	manifest func() any
}{
	{protocol.JobTypeNoop, builtinPlugins()[protocol.JobTypeNoop], func() any { return &protocol.NoopManifest{} }},
	{protocol.JobTypeCommand, builtinPlugins()[protocol.JobTypeCommand], func() any { return &protocol.CommandManifest{} }},
	{protocol.JobTypeTerraform, builtinPlugins()[protocol.JobTypeTerraform], func() any { return &protocol.TerraformManifest{} }},
	{protocol.JobTypeOCI, builtinPlugins()[protocol.JobTypeOCI], func() any { return &protocol.OCIManifest{} }},
	{protocol.JobTypeHelm, helm.New, func() any { return &protocol.HelmManifest{} }},
}

// FuzzJobManifest gives a job's manifest to its plugin's Validate, as the
// job process does with what the runner claimed. Validate never panics; its
// error names a field of the manifest ("backend.address: …") or says the
// manifest is not JSON of its type, and never shows a password the manifest
// carries; a manifest it accepts re-encodes to one that decodes to the same
// value and that it accepts too.
func FuzzJobManifest(f *testing.F) {
	for _, seed := range manifestSeeds(f) {
		f.Add(seed.which, seed.manifest)
	}
	f.Fuzz(func(t *testing.T, which uint8, manifest []byte) {
		mt := manifestTypes[int(which)%len(manifestTypes)]
		err := validate(mt.new, manifest)
		if err != nil {
			checkManifestError(t, mt.job, mt.manifest(), manifest, err)
			return
		}
		m := mt.manifest()
		if err := plugins.DecodeManifest(manifest, m); err != nil {
			t.Fatalf("%s: Validate accepted %q, which does not decode: %v", mt.job, manifest, err)
		}
		first, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("%s: %q decoded to %+v, which does not encode: %v", mt.job, manifest, m, err)
		}
		again := mt.manifest()
		if err := json.Unmarshal(first, again); err != nil {
			t.Fatalf("%s: %q re-encoded as %s, which does not decode: %v", mt.job, manifest, first, err)
		}
		if second, _ := json.Marshal(again); !bytes.Equal(first, second) {
			t.Fatalf("%s: %q: encode, decode, encode changed it:\n%s\n%s", mt.job, manifest, first, second)
		}
		if err := validate(mt.new, first); err != nil {
			t.Fatalf("%s: %q is valid, but re-encoded as %s it is not: %v", mt.job, manifest, first, err)
		}
	})
}

func validate(newPlugin plugins.Factory, manifest []byte) error {
	p := newPlugin()
	defer p.Cleanup()
	return p.Validate(manifest)
}

// checkManifestError: err starts with a field of the manifest, or says the
// manifest does not decode; no password of the manifest is in it.
func checkManifestError(t *testing.T, job string, m any, manifest []byte, err error) {
	msg := err.Error()
	if strings.HasPrefix(msg, "decoding manifest: ") {
		return
	}
	field, _, ok := strings.Cut(msg, ": ")
	first := strings.FieldsFunc(field, func(r rune) bool { return r == '.' || r == '[' })
	if !ok || len(first) == 0 || !hasJSONField(reflect.TypeOf(m).Elem(), first[0]) {
		t.Fatalf("%s: %q: the error %q names no field of the manifest", job, manifest, msg)
	}
	if json.Unmarshal(manifest, m) != nil {
		return
	}
	for _, secret := range passwords(reflect.ValueOf(m).Elem()) {
		if len(secret) >= 8 && strings.Contains(msg, secret) && !shownElsewhere(manifest, secret) {
			t.Fatalf("%s: %q: the error %q shows the password %q", job, manifest, msg, secret)
		}
	}
}

func hasJSONField(typ reflect.Type, name string) bool {
	for i := range typ.NumField() {
		if tag, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ","); tag == name {
			return true
		}
	}
	return false
}

// passwords are the values of the fields named Password within v.
func passwords(v reflect.Value) []string {
	var out []string
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			out = passwords(v.Elem())
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() != reflect.Uint8 {
			for i := range v.Len() {
				out = append(out, passwords(v.Index(i))...)
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).Name == "Password" {
				out = append(out, v.Field(i).String())
				continue
			}
			out = append(out, passwords(v.Field(i))...)
		}
	}
	return out
}

// shownElsewhere: the secret is also in a field that is no password, which
// an error may quote.
func shownElsewhere(manifest []byte, secret string) bool {
	var raw any
	if json.Unmarshal(manifest, &raw) != nil {
		return true
	}
	return strings.Contains(fmt.Sprint(dropPasswords(raw)), secret)
}

func dropPasswords(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k := range v {
			if k == "password" {
				delete(v, k)
				continue
			}
			v[k] = dropPasswords(v[k])
		}
	case []any:
		for i := range v {
			v[i] = dropPasswords(v[i])
		}
	}
	return v
}

type manifestSeed struct {
	which    uint8
	manifest []byte
}

// manifestSeeds are manifests of each type as the control plane renders
// them for examples/demo-app and examples/build-app.
func manifestSeeds(tb testing.TB) []manifestSeed {
	tb.Helper()
	pack := func(dir string) []byte {
		data, err := appconfig.ArchiveDir(os.DirFS("../examples"), dir)
		if err != nil {
			tb.Fatal(err)
		}
		return data
	}
	values, err := os.ReadFile("../examples/demo-app/charts/web/values.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	registry := protocol.RegistryAccess{Address: "127.0.0.1:5000", Username: "runner", Password: "reg-Password-never-shown", PlainHTTP: true}
	digest := "sha256:" + strings.Repeat("ab", 32)
	backend := protocol.TerraformBackend{Address: "http://127.0.0.1:8081/v1/state/ins_1.component.database",
		LockAddress: "http://127.0.0.1:8081/v1/state/ins_1.component.database/lock", UnlockAddress: "http://127.0.0.1:8081/v1/state/ins_1.component.database/lock",
		Password: "st_state-Password-never-shown"}
	vars := map[string]json.RawMessage{"install_id": json.RawMessage(`"ins_1"`), "network_id": json.RawMessage(`"net-1"`), "db_password": json.RawMessage(`"s3cret-pw"`)}
	seeds := map[int][]any{
		0: {protocol.NoopManifest{SleepMS: 1, Lines: []string{"hello"}}, protocol.NoopManifest{ExitCode: 3, Outputs: map[string]string{"url": "http://api"}}, nil},
		1: {protocol.CommandManifest{Args: []string{"kubectl", "get", "pods"}}, protocol.CommandManifest{Args: []string{"cat", "/etc/hostname"}, MaxOutputBytes: 1024}},
		2: {
			protocol.TerraformManifest{Operation: protocol.TerraformPlan, Workspace: "ins_1.component.database", Module: pack("demo-app/modules/database"), Variables: vars, Env: map[string]string{"AWS_REGION": "eu-west-1"}, Backend: backend},
			protocol.TerraformManifest{Operation: protocol.TerraformApply, Workspace: "ins_1.sandbox", Module: pack("demo-app/sandbox"), Backend: backend, PlanFile: []byte("plan")},
			protocol.TerraformManifest{Operation: protocol.TerraformPlanApply, Workspace: "ins_1.component.network", Backend: backend,
				ModuleSync: &protocol.TerraformModuleSync{Source: protocol.ArtifactRef{Registry: registry, Repository: "demo/network", Digest: digest}, Destination: protocol.OCIDestination{Registry: registry, Repository: "network"}}},
			protocol.TerraformManifest{Operation: protocol.TerraformOutputs, Workspace: "ins_1.component.cache", Backend: backend, ModuleArtifact: &protocol.ArtifactRef{Registry: registry, Repository: "cache", Digest: digest}},
		},
		3: {
			protocol.OCIManifest{Operation: protocol.OCIBuildTerraformModule, Component: "database", Source: pack("demo-app/modules/database"), Destination: protocol.OCIDestination{Registry: registry, Repository: "demo/database", Tag: "v1"}},
			protocol.OCIManifest{Operation: protocol.OCIBuildContainerImage, Component: "site", Image: &protocol.OCIImageSource{Reference: "docker.io/library/nginx:1.27", Username: "u", Password: "img-Password-never-shown"}, Destination: protocol.OCIDestination{Registry: registry, Repository: "demo/site"}},
			protocol.OCIManifest{Operation: protocol.OCISync, Artifact: &protocol.ArtifactRef{Registry: registry, Repository: "demo/database", Digest: digest}, Destination: protocol.OCIDestination{Registry: registry, Repository: "database"}},
		},
		4: {
			protocol.HelmManifest{Operation: protocol.HelmDeploy, Kubeconfig: fuzzKubeconfig, Release: "web", Namespace: "demo", CreateNamespace: true,
				ChartArchive: pack("demo-app/charts/web"), ValuesFiles: []string{string(values)}, Values: json.RawMessage(`{"replicas":2,"apiURL":"http://api.demo"}`), SensitiveValues: []string{"values.apiURL"}},
			protocol.HelmManifest{Operation: protocol.HelmPlan, Kubeconfig: fuzzKubeconfig, Release: "site", Namespace: "demo",
				Chart: &protocol.ArtifactRef{Registry: registry, Repository: "demo/site", Digest: digest}, TimeoutMS: 60_000, Wait: true},
			protocol.HelmManifest{Operation: protocol.HelmUninstall, Kubeconfig: fuzzKubeconfig, Release: "web", Namespace: "demo"},
		},
	}
	var out []manifestSeed
	for i := range manifestTypes {
		for _, m := range seeds[i] {
			data, err := json.Marshal(m)
			if err != nil {
				tb.Fatal(err)
			}
			out = append(out, manifestSeed{uint8(i), data})
		}
	}
	return out
}

// fuzzKubeconfig reaches a cluster with a bearer token, in JSON (which a
// kubeconfig may be).
const fuzzKubeconfig = `{"apiVersion": "v1", "kind": "Config", "current-context": "ctx",
  "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:6443", "insecure-skip-tls-verify": true}}],
  "users": [{"name": "u", "user": {"token": "kube-Token-never-shown"}}],
  "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}]}`
