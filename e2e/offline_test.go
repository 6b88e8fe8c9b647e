package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/releasebundle/bundletest"
)

// offlineSecret is the offline app's sensitive input: given on the
// command line, it must be in no file the deploy writes but the state.
const offlineSecret = "offline-s3cret-pa55"

// writeOfflineApp is the time app (a module whose build vendors
// hashicorp/time) with a sensitive input its sandbox echoes, the example's
// local cluster, an image (upstream, copied by its build) and the example's
// web chart running that image in that cluster, and a third-party sidecar
// image it lists for relocation (copied by the chart's build).
func writeOfflineApp(t *testing.T, upstream, sidecar string) string {
	dir := writeTimeApp(t)
	copyDir(t, filepath.Join(exampleDir, "modules", "cluster"), filepath.Join(dir, "modules", "cluster"))
	copyDir(t, filepath.Join(exampleDir, "charts", "web"), filepath.Join(dir, "charts", "web"))
	writeTestFile(t, filepath.Join(dir, "components", "cluster.toml"), "name = \"cluster\"\ntype = \"terraform_module\"\nsource = \"modules/cluster\"\n\n"+
		"[variables]\ninstall_id = \"{{ .install.id }}\"\nlocal_dir = \"/tmp/outpost-sandboxes\"\n")
	writeTestFile(t, filepath.Join(dir, "components", "api_image.toml"), "name = \"api_image\"\ntype = \"container_image\"\n"+
		"image = \""+upstream+"\"\nplain_http = true\n")
	writeTestFile(t, filepath.Join(dir, "components", "web.toml"), "name = \"web\"\ntype = \"helm_chart\"\nsource = \"charts/web\"\n"+
		"namespace = \"demo\"\ncreate_namespace = true\nkubeconfig = \"{{ .components.cluster.outputs.kubeconfig }}\"\nrelocate_images = true\n"+
		"images = [\""+sidecar+"\"]\n\n"+
		"[values]\nimage = \"{{ .components.api_image.outputs.image }}\"\napiURL = \"{{ .components.clock.outputs.started }}\"\n")
	writeTestFile(t, filepath.Join(dir, "charts", "web", "templates", "sidecar.yaml"), "apiVersion: apps/v1\nkind: Deployment\n"+
		"metadata:\n  name: sidecar\nspec:\n  replicas: 0\n  selector:\n    matchLabels: {app: sidecar}\n  template:\n"+
		"    metadata:\n      labels: {app: sidecar}\n    spec:\n      containers:\n        - name: sidecar\n          image: "+sidecar+"\n")
	toml := "[app]\nname = \"demo\"\n\n[sandbox]\nsource = \"sandbox\"\n\n[sandbox.variables]\ninstall_id = \"{{ .install.id }}\"\n" +
		"token = \"{{ .install.inputs.token }}\"\n\n[[inputs]]\nname = \"token\"\ntype = \"string\"\nrequired = true\nsensitive = true\n"
	writeTestFile(t, filepath.Join(dir, "outpost.toml"), toml)
	writeTestFile(t, filepath.Join(dir, "sandbox", "main.tf"), `variable "token" {
  type = string
}

output "dsn" {
  value = "app:${var.token}@db.internal"
}

resource "terraform_data" "sandbox" {
  input = "sandbox"

  provisioner "local-exec" {
    command = "echo the token is $TOKEN"
    environment = {
      TOKEN = var.token
    }
  }
}
`)
	return dir
}

// netns is a network namespace with loopback only: no route anywhere else.
type netns string

func newNetns(t *testing.T) netns {
	t.Helper()
	n := netns(fmt.Sprintf("outpost-offline-%d", os.Getpid()))
	if out, err := exec.Command("ip", "netns", "add", string(n)).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", string(n)).Run() })
	if out, err := n.command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("lo up: %v\n%s", err, out)
	}
	return n
}

// command runs a command in the namespace.
func (n netns) command(name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", string(n), name}, args...)...)
}

// A module needing hashicorp/time is built (its provider from a filesystem
// mirror only the build runner sees), exported in a signed bundle, and
// deployed by `outpost-runner offline deploy` in a network namespace that
// reaches nothing but its own loopback: the sandbox (which starts the
// install's registry there), the bundle's build loaded into that registry,
// and the component, whose providers come from its build. A bundle with one
// byte changed is refused before anything runs; the sensitive input given
// on the command line is in neither the result nor the output; a second
// deploy keeps the first's state (the time it recorded is the same).
func TestOfflineDeployOfABundle(t *testing.T) {
	s := newStack(t, stackOptions{})
	dir := t.TempDir()
	c, installID, installFile, images := offlineBundleApp(t, s, dir)
	bundle, key := exportBundle(c, dir)

	ns := newNetns(t)
	if out, err := ns.command("ip", "route", "get", "1.1.1.1").CombinedOutput(); err == nil {
		t.Fatalf("the namespace has a route out: %s", out)
	}
	t.Cleanup(func() {
		_ = ns.command(filepath.Join(binDir, "outpost-registry"), "down", "-dir", "/tmp/outpost-sandboxes/"+installID+"/registry").Run()
	})
	stateDir, result := filepath.Join(dir, "state"), filepath.Join(dir, "result.json")
	deploy := func(bundle string) (string, int) {
		cmd := ns.command(runnerBin, offlineDeployArgs(bundle, installFile, key, stateDir, result, "token="+offlineSecret)...)
		cmd.Env = offlineDeployEnv(dir)
		out, err := cmd.CombinedOutput()
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			t.Fatal(err)
		}
		return string(out), cmd.ProcessState.ExitCode()
	}
	checkChangedBundleRefused(t, bundle, stateDir, deploy)

	out, code := deploy(bundle)
	res := bundletest.ReadResult(t, result)
	if code != 0 || res.Status != "succeeded" {
		t.Fatalf("offline deploy: exit %d\n%s\nresult: %+v", code, out, res)
	}
	started := checkOfflineResult(t, res, images)
	if raw, _ := os.ReadFile(result); strings.Contains(string(raw), offlineSecret) || strings.Contains(out, offlineSecret) {
		t.Errorf("the sensitive input is in the result or the output")
	}

	if out, code := deploy(bundle); code != 0 {
		t.Fatalf("second offline deploy: exit %d\n%s", code, out)
	}
	if again, _ := offlineStep(t, bundletest.ReadResult(t, result), "clock").Outputs["started"].(string); again != started {
		t.Errorf("second deploy: started = %q, want the first's %q (the state kept)", again, started)
	}
	checkImported(t, c, installID, result)
}

// offlineBundleApp has the offline app built (the time provider from a
// mirror only the build runner sees) and an install of it exported into
// dir, its sensitive input not in the file; it returns the CLI, the
// install's ID and file, and its images.
func offlineBundleApp(t *testing.T, s *stack, dir string) (*cli, string, string, offlineImages) {
	t.Helper()
	buildRC := filepath.Join(dir, "build.tfrc")
	writeTestFile(t, buildRC, "provider_installation {\n  filesystem_mirror {\n    path = \""+timeProviderMirror(t)+"\"\n  }\n}\n")
	s.buildRunner = s.launchRunner("OUTPOST_TOKEN="+s.buildTok, "OUTPOST_TERRAFORM_CLI_CONFIG="+buildRC)
	c := newCLI(t, s)
	var imgs offlineImages
	var upstream string
	upstream, imgs.api = publicImage(t, "library/api:1.0", 1<<10, 1)
	imgs.sidecar, imgs.sidecarDigest = publicImage(t, "library/sidecar:1.0", 1<<10, 1)
	s.syncConfig(writeOfflineApp(t, upstream, imgs.sidecar))
	s.waitBuildsEnded()
	installID, installFile := s.offlineInstall(c, "air-gapped", dir, map[string]any{"name": "token", "value": "vendor-side-placeholder", "sensitive": true})
	if raw, _ := os.ReadFile(installFile); strings.Contains(string(raw), "vendor-side-placeholder") {
		t.Fatalf("the install file holds the sensitive input's value:\n%s", raw)
	}
	return c, installID, installFile, imgs
}

// offlineImages are the offline app's images: its container_image's
// digest, and the third-party sidecar its chart lists.
type offlineImages struct {
	api, sidecarDigest v1.Hash
	sidecar            string
}

// checkChangedBundleRefused deploys the bundle with one byte of its
// signature changed: refused, before the state directory is made.
func checkChangedBundleRefused(t *testing.T, bundle, stateDir string, deploy func(string) (string, int)) {
	t.Helper()
	data, err := os.ReadFile(bundle)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte(`"signature": "`))
	data[i+len(`"signature": "`)+8] ^= 0x01
	changed := filepath.Join(filepath.Dir(bundle), "changed.tar")
	writeTestFile(t, changed, string(data))
	if out, code := deploy(changed); code != 1 || !strings.Contains(out, "bundle refused: signature: ") {
		t.Fatalf("deploy of a changed bundle: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(stateDir); !os.IsNotExist(err) {
		t.Fatalf("a refused bundle left the state dir %s (%v)", stateDir, err)
	}
}

// checkOfflineResult checks the first deploy's result: every step, the
// image's and the chart's, the module's from its build's providers, the
// sandbox's token left out and scrubbed. It returns clock's time.
func checkOfflineResult(t *testing.T, res protocol.OfflineResult, imgs offlineImages) string {
	t.Helper()
	if got := bundletest.Steps(res); got != offlineStepsWant {
		t.Errorf("steps: %s, want %s", got, offlineStepsWant)
	}
	checkOfflineImageAndChart(t, res, imgs)
	clock := offlineStep(t, res, "clock")
	started, _ := clock.Outputs["started"].(string)
	if _, err := time.Parse(time.RFC3339, started); err != nil {
		t.Errorf("clock's output started = %q: want time_static's RFC 3339 time", started)
	}
	for _, want := range []string{"those the module's build vendored", "Installed hashicorp/time v" + timeProviderVersion} {
		if !strings.Contains(clock.Log, want) {
			t.Errorf("clock's log has no %q:\n%s", want, clock.Log)
		}
	}
	if !strings.Contains(res.Steps[0].Log, "output dsn left out of the result") {
		t.Errorf("the sandbox's output holding the token is not said to be left out:\n%s", res.Steps[0].Log)
	}
	if !strings.Contains(res.Steps[0].Log, "the token is (sensitive value)") {
		t.Errorf("the sandbox's log does not show the token scrubbed:\n%s", res.Steps[0].Log)
	}
	return started
}

// checkImported imports an offline deploy's result with the vendor's CLI:
// the install shows it as an offline operation with the deploy's steps.
func checkImported(t *testing.T, c *cli, installID, result string) {
	t.Helper()
	var op struct {
		Kind, Status, Source string
		BundleIndex          string `json:"bundle_index"`
		Steps                []protocol.OfflineStep
	}
	c.json("", &op, "installs", "import-result", installID, result)
	if op.Kind != "offline_deploy" || op.Status != "succeeded" || op.Source != "offline" || op.BundleIndex == "" ||
		bundletest.Steps(protocol.OfflineResult{Steps: op.Steps}) != offlineStepsWant {
		t.Errorf("imported: %+v", op)
	}
}

// offlineStepsWant are the offline app's steps, all succeeded, in order.
const offlineStepsWant = "sandbox succeeded, sync succeeded, api_image succeeded, clock succeeded, cluster succeeded, web succeeded"

func offlineStep(t *testing.T, r protocol.OfflineResult, name string) protocol.OfflineStep {
	t.Helper()
	for _, st := range r.Steps {
		if st.Name == name {
			return st
		}
	}
	t.Fatalf("no step %s in the result: %s", name, bundletest.Steps(r))
	return protocol.OfflineStep{}
}

// checkOfflineImageAndChart checks the image's and the chart's steps: the
// image runs by digest from the install's registry (the sandbox's), and the
// chart's release was deployed with its objects, its sidecar from the
// bundle (its registry unreachable in the namespace) by digest.
func checkOfflineImageAndChart(t *testing.T, r protocol.OfflineResult, imgs offlineImages) {
	t.Helper()
	reg, _ := offlineStep(t, r, "sandbox").Outputs["registry_address"].(string)
	if img := offlineStep(t, r, "api_image").Outputs["image"]; reg == "" || img != reg+"/outpost/api_image@"+imgs.api.String() {
		t.Errorf("api_image's image output %v, want it in the install's registry %q by digest %s", img, reg, imgs.api)
	}
	ref, _ := name.ParseReference(imgs.sidecar, name.Insecure)
	sidecar := reg + "/outpost/web/images/" + strings.ReplaceAll(ref.Context().RegistryStr(), ":", "-") + "/library/sidecar@" + imgs.sidecarDigest.String()
	if log := offlineStep(t, r, "web").Log; !strings.Contains(log, "image: "+sidecar+"\n") {
		t.Errorf("web's plan does not run the sidecar %s from the bundle:\n%s", sidecar, log)
	}
	web := offlineStep(t, r, "web")
	objects, _ := json.Marshal(web.Outputs["objects"])
	if web.Outputs["release_name"] != "web" || web.Outputs["status"] != "deployed" || !strings.Contains(string(objects), `"Deployment/demo/web"`) {
		t.Errorf("web's outputs %v: want release web deployed, with its Deployment", web.Outputs)
	}
}

// publicImage pushes a random image of layers layers of layerSize bytes to
// a stand-in public registry on loopback (closed when t ends) and returns
// its reference and digest.
func publicImage(t testing.TB, repoTag string, layerSize, layers int64) (string, v1.Hash) {
	t.Helper()
	public, err := registry.Start(context.Background(), registry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { public.Close() })
	img, err := random.Image(layerSize, layers)
	if err != nil {
		t.Fatal(err)
	}
	src, _ := name.ParseReference(public.Addr()+"/"+repoTag, name.Insecure)
	if err := remote.Write(src, img); err != nil {
		t.Fatal(err)
	}
	digest, _ := img.Digest()
	return src.String(), digest
}

// offlineInstall creates an install of the stack's app, with no runner, and
// exports its install file into dir; it returns the install's ID and the
// file's path.
func (s *stack) offlineInstall(c *cli, name, dir string, inputs ...map[string]any) (string, string) {
	s.t.Helper()
	var created struct {
		ID string `json:"id"`
	}
	if code := s.do("POST", "/v1/installs", map[string]any{"app_id": s.install.AppID, "name": name, "inputs": inputs}, &created); code != http.StatusCreated {
		s.t.Fatalf("create install %s: %d", name, code)
	}
	s.stopSandboxRegistries(created.ID)
	installFile := filepath.Join(dir, name+".json")
	c.ok("", "installs", "export", created.ID, "--out", installFile)
	return created.ID, installFile
}

// offlineDeployArgs are outpost-runner's arguments for an offline deploy.
func offlineDeployArgs(bundle, installFile, key, stateDir, result string, inputs ...string) []string {
	args := []string{"offline", "deploy", bundle, "--install-file", installFile, "--release-key", key, "--state-dir", stateDir, "--result", result}
	for _, in := range inputs {
		args = append(args, "--input", in)
	}
	return args
}

// offlineDeployEnv is an offline deploy's environment: the binaries, and
// the Kubernetes ones for local clusters.
func offlineDeployEnv(home string) []string {
	return []string{"PATH=" + binDir + ":" + os.Getenv("PATH"), "HOME=" + home, "OUTPOST_KUBE_ASSETS=" + kubeAssets}
}

// exampleBundle starts a stack with a build runner, syncs the example app
// and waits for its builds, and exports its config version 1 as a signed
// bundle into a temporary directory (exportBundle); it returns the stack,
// its CLI, the directory and the bundle's and public key's paths.
func exampleBundle(tb testing.TB) (*stack, *cli, string, string, string) {
	s := newStack(tb, stackOptions{})
	s.buildRunner = s.startBuildRunner()
	c := newCLI(tb, s)
	s.syncConfig(exampleDir)
	s.waitBuildsEnded()
	dir := tb.TempDir()
	bundle, key := exportBundle(c, dir)
	return s, c, dir, bundle, key
}

// exportBundle makes the org's release key and exports the demo app's
// config version 1 with it, into dir; it returns the bundle's and the
// public key's paths.
func exportBundle(c *cli, dir string) (string, string) {
	bundle, key := filepath.Join(dir, "demo-1.tar"), filepath.Join(dir, "release-key.pem")
	c.ok("", "bundle", "release-key", "--create", "--out", key)
	c.ok("", "bundle", "export", "--app", "demo", "--config-version", "1", "--out", bundle)
	return bundle, key
}
