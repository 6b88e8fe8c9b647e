package offline

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/jobmanifest"
	"github.com/outpost-dev/outpost/protocol"
)

// machineConfig is a kubeconfig file of the operator's machine.
const machineConfig = `apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: "https://127.0.0.1:6443"}
users:
- name: admin
  user: {token: abc}
contexts:
- name: local
  context: {cluster: local, user: admin}
current-context: local
`

// A chart goes to the machine's cluster only when the app names none: a
// missing machine kubeconfig fails that step alone, naming the component
// and the file; a sandbox kubeconfig output that is empty or not a string
// is the step's error naming the output, whatever the machine has.
func TestChartClusterOffline(t *testing.T) {
	machine := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(machine, []byte(machineConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, file, output, want string
	}{
		{"no cluster named, the machine's", machine, "", "server: https://127.0.0.1:6443"},
		{"no cluster named, the machine's missing", "/nonexistent", "", "error: component web: --kubeconfig /nonexistent: reading it: "},
		{"the sandbox's", machine, `"apiVersion: v1\nkind: Config\n"`, "apiVersion: v1\nkind: Config\n"},
		{"the sandbox's empty", machine, `""`, `error: component web: the sandbox's "kubeconfig" output is not a kubeconfig`},
		{"the sandbox's not a string", machine, `{"a": 1}`, `error: component web: the sandbox's "kubeconfig" output is not a kubeconfig`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := chartDeployment(t, tc.output)
			d.o.KubeconfigFile = tc.file
			data, err := d.data()
			if err != nil {
				t.Fatal(err)
			}
			kc, err := d.kubeconfig(data, "web")
			if err != nil {
				kc = "error: " + err.Error()
			}
			if !strings.Contains(kc, tc.want) {
				t.Errorf("got %q, want %q in it", kc, tc.want)
			}
		})
	}
}

// chartDeployment is a deployment of an app of a chart, its sandbox's
// kubeconfig output the JSON value output ("": no such output).
func chartDeployment(t *testing.T, output string) *deployment {
	t.Helper()
	fsys := fstest.MapFS{
		"outpost.toml":          {Data: []byte("[app]\nname = \"shop\"\n\n[sandbox]\nsource = \"sandbox\"\n")},
		"sandbox/main.tf":       {Data: []byte("output \"x\" {\n  value = 1\n}\n")},
		"components/web.toml":   {Data: []byte("name = \"web\"\ntype = \"helm_chart\"\nsource = \"charts/web\"\nnamespace = \"shop\"\n")},
		"charts/web/Chart.yaml": {Data: []byte("apiVersion: v2\nname: web\nversion: 0.1.0\n")},
	}
	d := &deployment{inst: jobmanifest.Install{ID: "inst_1", Inputs: map[string]string{}}, outputs: map[string]string{}}
	archive, err := appconfig.ArchiveDir(fsys, ".")
	if err == nil {
		d.cfg, err = appconfig.FromArchive(archive)
	}
	if err != nil {
		t.Fatal(err)
	}
	if output != "" {
		raw, _ := json.Marshal(protocol.TerraformApplyOutputs{Outputs: map[string]protocol.TerraformOutput{
			jobmanifest.OutputKubeconfig: {Value: json.RawMessage(output)}}})
		d.outputs["sandbox"] = string(raw)
	}
	return d
}
