package appconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/internal/testutil/terraformtest"
	"github.com/outpost-dev/outpost/localcluster"
	"github.com/outpost-dev/outpost/protocol"
)

const exampleDir = "../examples/demo-app"

func TestExampleValidates(t *testing.T) {
	c, err := Load(os.DirFS(exampleDir))
	if err != nil {
		t.Fatalf("examples/demo-app: %v", err)
	}
	g := c.Graph()
	levels, err := g.Levels()
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{"cluster", "network"}, {"cache", "database"}, {"api"}, {"web"}}; !reflect.DeepEqual(levels, want) {
		t.Errorf("levels = %v, want the cluster beside the diamond, then the chart %v", levels, want)
	}
	if down, _ := g.TeardownLevels(); !reflect.DeepEqual(down, [][]string{{"web"}, {"api", "cluster"}, {"cache", "database"}, {"network"}}) {
		t.Errorf("teardown levels = %v", down)
	}
	web, _ := c.Component("web")
	if web.Type != contract.TypeHelmChart || web.Helm == nil || web.Helm.Namespace != "demo" || !reflect.DeepEqual(web.Dependencies, []string{"api", "cluster"}) {
		t.Errorf("web: %s %+v, dependencies %v; want a helm chart in namespace demo after api and cluster (its kubeconfig)", web.Type, web.Helm, web.Dependencies)
	}
	db, _ := c.Component("database")
	if len(db.DeclaredDependencies) != 0 || !reflect.DeepEqual(db.Dependencies, []string{"network"}) {
		t.Errorf("database: declared %v, effective %v; want network implied by its templates", db.DeclaredDependencies, db.Dependencies)
	}
	in, _ := c.input("db_password")
	if !in.Sensitive || !in.Required {
		t.Errorf("db_password = %+v", in)
	}
	hello, ok := c.Action("hello")
	if !ok || len(hello.Triggers) != 1 || hello.Triggers[0].Type != TriggerManual || hello.InputNames()[0] != "name" ||
		len(hello.Steps) != 1 || hello.Steps[0].Script != "actions/hello.sh" || !strings.Contains(hello.Steps[0].ScriptText, "$OUTPOST_OUTPUTS") {
		t.Errorf("hello = %+v (found %v); want a manual action with input name whose script writes an output", hello, ok)
	}
}

// TestExampleProvisionsWithTerraform does what the control plane and the
// runner do, with terraform itself: for the sandbox, then each component in
// order, render the variables, unpack the module archive, apply, and feed
// the outputs to the next; then destroy in teardown order.
func TestExampleProvisionsWithTerraform(t *testing.T) {
	tf, err := terraformtest.Path()
	if err != nil {
		t.Skipf("%v: set OUTPOST_TERRAFORM, put it on PATH, or run scripts/tools.sh", err)
	}
	c, err := Load(os.DirFS(exampleDir))
	if err != nil {
		t.Fatal(err)
	}
	inputs, err := c.ResolveInputs(map[string]string{"db_password": "s3cret-pw"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := Data{InstallID: "ins_test", InstallName: "acme", Inputs: inputs, Components: map[string]map[string]Value{}}
	work := t.TempDir()
	// The sandbox starts the install's registry with outpost-registry from PATH,
	// the cluster component its cluster with outpost-cluster (OUTPOST_KUBE_ASSETS).
	bin := testutil.Build(t, "../cmd/outpost-registry", "../cmd/outpost-cluster")
	wd, _ := os.Getwd()
	assets, err := localcluster.FindAssets(os.Getenv(localcluster.EnvAssets), wd)
	if err != nil {
		t.Fatal(err)
	}
	localDir := t.TempDir()
	t.Cleanup(func() {
		down := exec.Command(filepath.Join(bin, "outpost-registry"), "down", "-dir", filepath.Join(localDir, d.InstallID, "registry"))
		if out, err := down.CombinedOutput(); err != nil {
			t.Errorf("stop the sandbox's registry: %v\n%s", err, out)
		}
		stopDaemon(t, filepath.Join(localDir, d.InstallID, "cluster", "pid"))
	})

	run := func(dir string, env map[string]string, args ...string) []byte {
		t.Helper()
		cmd := exec.Command(tf, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1", localcluster.EnvAssets+"="+assets,
			"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("terraform %s in %s: %v\n%s\n%s", strings.Join(args, " "), dir, err, out, stderr.String())
		}
		return out
	}
	apply := func(name string, tm *TerraformModule, r *Rendered) map[string]Value {
		t.Helper()
		dir := filepath.Join(work, name)
		archive, err := c.ModuleArchive(tm.Source)
		if err != nil {
			t.Fatal(err)
		}
		fsys, err := ReadArchive(bytes.NewReader(archive))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.CopyFS(dir, fsys); err != nil {
			t.Fatal(err)
		}
		vars, _ := json.Marshal(r.Variables)
		if err := os.WriteFile(filepath.Join(dir, "outpost.auto.tfvars.json"), vars, 0o600); err != nil {
			t.Fatal(err)
		}
		run(dir, r.EnvVars, "init", "-input=false", "-no-color")
		run(dir, r.EnvVars, "apply", "-auto-approve", "-input=false", "-no-color")
		var outs map[string]protocol.TerraformOutput
		if err := json.Unmarshal(run(dir, r.EnvVars, "output", "-json"), &outs); err != nil {
			t.Fatal(err)
		}
		vals, err := OutputValues(outs)
		if err != nil {
			t.Fatal(err)
		}
		return vals
	}

	r, err := c.RenderSandbox(d)
	if err != nil {
		t.Fatal(err)
	}
	r.Variables["local_dir"], _ = json.Marshal(localDir)
	r.Variables["registry_port"], _ = json.Marshal(freePort(t))
	d.SandboxOutputs = apply("sandbox", &c.Sandbox, r)
	if addr, _ := d.SandboxOutputs["registry_address"].Value.(string); addr == "" {
		t.Errorf("sandbox registry_address = %v", d.SandboxOutputs["registry_address"])
	} else if resp, err := http.Get("http://" + addr + "/v2/"); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the install registry at %s: %v %v; want it up, asking for credentials", addr, resp, err)
	}
	if got := d.SandboxOutputs["cluster_name"].Value; got != "acme-cluster" {
		t.Errorf("sandbox cluster_name = %v", got)
	}
	order, err := c.Graph().Order()
	if err != nil {
		t.Fatal(err)
	}
	rendered := map[string]*Rendered{}
	for _, name := range order {
		cmp, _ := c.Component(name)
		if cmp.Terraform == nil {
			continue // the helm chart: deployed by the runner's helm plugin (e2e)
		}
		if name == "api" {
			d = migrateExample(t, c, d) // its before-hook
		}
		r, err := c.RenderComponent(name, d)
		if err != nil {
			t.Fatalf("render %s: %v", name, err)
		}
		rendered[name] = r
		d.Components[name] = apply(name, cmp.Terraform, r)
	}
	checkExampleAfterAPI(t, c, d)

	// The chart's kubeconfig is the cluster component's (sensitive) output.
	if kc := d.Components["cluster"]["kubeconfig"]; !strings.Contains(fmt.Sprint(kc.Value), "server: ") || !kc.Sensitive {
		t.Errorf("cluster's kubeconfig: want a sensitive kubeconfig, got %d bytes (sensitive %v)", len(fmt.Sprint(kc.Value)), kc.Sensitive)
	} else if got, err := c.RenderHelmKubeconfig("web", d); err != nil || got != kc.Value {
		t.Errorf("web's kubeconfig rendered %d bytes, %v; want the cluster's", len(got), err)
	}

	// Outputs flowed through the templates, with their types.
	api := d.Components["api"]
	if got := api["url"].Value; got != "https://acme.eu-west-1.example.com" {
		t.Errorf("api url = %v", got)
	}
	if got := api["replicas"].Value; got != json.Number("2") {
		t.Errorf("api replicas = %#v, want the number 2", got)
	}
	if url := d.Components["database"]["url"]; !url.Sensitive || !strings.Contains(url.Value.(string), "s3cret-pw") {
		t.Errorf("database url = %+v, want sensitive and holding the password", url)
	}
	if got := rendered["api"].Sensitive; !reflect.DeepEqual(got, []string{"variables.database_url"}) {
		t.Errorf("api sensitive = %v", got)
	}
	if got := rendered["database"].Sensitive; !reflect.DeepEqual(got, []string{"variables.password"}) {
		t.Errorf("database sensitive = %v", got)
	}

	teardown, _ := c.Graph().TeardownOrder()
	for _, name := range teardown {
		r, ok := rendered[name]
		if !ok {
			continue // not a terraform component
		}
		run(filepath.Join(work, name), r.EnvVars, "destroy", "-auto-approve", "-input=false", "-no-color")
	}
	if _, err := os.Stat(filepath.Join(localDir, d.InstallID, "cluster")); !os.IsNotExist(err) {
		t.Errorf("the cluster component's destroy left its directory (%v)", err)
	}
	run(filepath.Join(work, "sandbox"), nil, "destroy", "-auto-approve", "-input=false", "-no-color")
	if _, err := os.Stat(filepath.Join(localDir, d.InstallID)); !os.IsNotExist(err) {
		t.Errorf("the sandbox's destroy left the install's directory (%v)", err)
	}
}

// freePort is a TCP port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	p, err := testutil.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// stopDaemon stops the process its pid file names and waits until it is
// gone.
func stopDaemon(t *testing.T, pidFile string) {
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Errorf("pid file %s: %v", pidFile, err)
		return
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	for i := 0; i < 300 && syscall.Kill(pid, 0) == nil; i++ {
		time.Sleep(100 * time.Millisecond)
	}
}
