package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	ggcr "github.com/google/go-containerregistry/pkg/v1/remote"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/localcluster/localclustertest"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/releasebundle"
	"github.com/outpost-dev/outpost/releasebundle/bundletest"
	"github.com/outpost-dev/outpost/runner/ociclient"
)

// offlineGreeting is the shop app's sensitive input: the chart puts it in
// a ConfigMap; it must be in neither the result nor the output.
const offlineGreeting = "hello-from-the-airgap"

// shopApp is an app of a sandbox naming the install's registry (an
// input), a container_image component and a chart running that image,
// with relocate_images.
func shopApp(upstream string) fstest.MapFS {
	files := map[string]string{
		"outpost.toml": "[app]\nname = \"shop\"\n\n[sandbox]\nsource = \"sandbox\"\n\n[sandbox.variables]\nregistry = \"{{ .install.inputs.registry }}\"\n\n" +
			"[[inputs]]\nname = \"registry\"\ntype = \"string\"\nrequired = true\n\n" +
			"[[inputs]]\nname = \"greeting\"\ntype = \"string\"\nrequired = true\nsensitive = true\n",
		"sandbox/main.tf": "variable \"registry\" {\n  type = string\n}\n\noutput \"registry_address\" {\n  value = var.registry\n}\n\n" +
			"output \"registry_plain_http\" {\n  value = true\n}\n",
		"components/api_image.toml": "name = \"api_image\"\ntype = \"container_image\"\nimage = \"" + upstream + "\"\nplain_http = true\n",
		"components/web.toml": "name = \"web\"\ntype = \"helm_chart\"\nsource = \"charts/web\"\nnamespace = \"shop\"\ncreate_namespace = true\n" +
			"relocate_images = true\n\n[values]\nimage = \"{{ .components.api_image.outputs.image }}\"\ngreeting = \"{{ .install.inputs.greeting }}\"\n",
		"charts/web/Chart.yaml": "apiVersion: v2\nname: web\nversion: 0.1.0\n",
		"charts/web/templates/web.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
data:
  GREETING: {{ .Values.greeting | quote }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: {{ .Values.image }}
`,
	}
	return mapFS(files)
}

// mapFS is files as a file system.
func mapFS(files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, content := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(content)}
	}
	return fsys
}

// vendorBuilds builds the app's chart and image into the vendor's registry
// by the runner's own build jobs, and returns the bundle's artifacts.
func vendorBuilds(t *testing.T, bins string, vendor protocol.RegistryAccess, cfg *appconfig.Config) []releasebundle.Artifact {
	t.Helper()
	chart, err := cfg.ChartArchive("charts/web")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := cfg.Component("api_image")
	dst := protocol.OCIDestination{Registry: vendor, Repository: "org_1/app_1"}
	src, err := ociclient.Repository(vendor, dst.Repository)
	if err != nil {
		t.Fatal(err)
	}
	var out []releasebundle.Artifact
	for _, b := range []struct {
		bin, typ, component, componentType string
		m                                  protocol.OCIManifest
	}{
		{"outpost-runner-helm", protocol.JobTypeHelmChart, "web", "helm_chart",
			protocol.OCIManifest{Operation: protocol.OCIBuildHelmChart, Component: "web", Source: chart, Destination: dst}},
		{"outpost-runner", protocol.JobTypeOCI, "api_image", "container_image",
			protocol.OCIManifest{Operation: protocol.OCIBuildContainerImage, Component: "api_image",
				Image: &protocol.OCIImageSource{Reference: c.Image.Image, PlainHTTP: true}, Destination: dst}},
	} {
		raw, _ := json.Marshal(b.m)
		res := runJob(t, filepath.Join(bins, b.bin), protocol.Job{ID: "build_" + b.component, Type: b.typ, Attempt: 1, Manifest: raw})
		var a protocol.Artifact
		if res.Status != protocol.StatusSucceeded || json.Unmarshal(res.Outputs, &a) != nil {
			t.Fatalf("build of %s: %+v", b.component, res)
		}
		out = append(out, releasebundle.Artifact{Component: b.component, ComponentType: b.componentType, BuildID: "bld_" + b.component,
			Digest: a.Digest, Source: src})
	}
	return out
}

// writeBundle writes config version 1 of the app in dir, with its builds,
// as a bundle signed by a new release key; it returns the bundle's and
// the public key's paths.
func writeBundle(t *testing.T, out string, archive []byte, artifacts []releasebundle.Artifact) (string, string) {
	t.Helper()
	pub, key, _ := ed25519.GenerateKey(rand.Reader)
	l, err := releasebundle.Write(context.Background(), filepath.Join(out, "layout"), releasebundle.Contents{Org: "org_1", App: "app_1",
		AppName: "shop", ConfigVersion: 1, ConfigArchive: archive, Artifacts: artifacts}, key)
	if err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(out, "shop-1.tar")
	f, err := os.Create(bundle)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := l.Tar(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	pemText, err := releasebundle.PublicKeyPEM(pub)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(out, "release-key.pem")
	if err := os.WriteFile(keyFile, []byte(pemText), 0o644); err != nil {
		t.Fatal(err)
	}
	return bundle, keyFile
}

// startRegistry starts a registry on loopback, in memory, for t.
func startRegistry(t *testing.T) protocol.RegistryAccess {
	t.Helper()
	srv, err := registry.Start(context.Background(), registry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return protocol.RegistryAccess{Address: srv.Addr(), PlainHTTP: true}
}

// shopPolicy is a customer's plan policy that warns of each Deployment a
// chart makes.
const shopPolicy = `package customer.deployments

warn contains msg if {
	some obj in input.manifests
	obj.kind == "Deployment"
	msg := sprintf("Deployment %s", [obj.metadata.name])
}
`

// An app of a container_image and a chart running it, built by the
// runner's build jobs and exported in a signed bundle, deployed by
// `outpost-runner offline deploy` into a real API server: with no
// kubeconfig the chart's step fails naming the component and what to give;
// with KUBECONFIG set the image's step gives its place in the install's
// registry, by digest, and the chart is planned (the customer's policy's
// warning in its result) and deployed from the bundle running that image,
// its sensitive value in the cluster but not in the result.
func TestOfflineDeployOfAChartAndAnImage(t *testing.T) {
	cluster := localclustertest.Start(t)
	bins := testutil.Build(t, ".", "../outpost-runner")
	vendor, install := startRegistry(t), startRegistry(t)
	img, err := random.Image(1<<10, 1)
	if err != nil {
		t.Fatal(err)
	}
	upstream := vendor.Address + "/upstream/api:1.0"
	ref, _ := name.ParseReference(upstream, name.Insecure)
	if err := ggcr.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	d := newOfflineDeploy(t, bins, shopApp(upstream), func(cfg *appconfig.Config) []releasebundle.Artifact {
		return vendorBuilds(t, bins, vendor, cfg)
	}, map[string]string{"registry": install.Address}, "greeting")
	d.args = append(d.args, "--input", "greeting="+offlineGreeting, "--plan-policies", d.file("policies/warn.rego", shopPolicy))

	out, code := d.run()
	res := bundletest.ReadResult(t, d.result)
	if code != 1 || bundletest.Steps(res) != "sandbox succeeded, sync succeeded, api_image succeeded, web failed" ||
		!strings.Contains(res.Error, "step web: component web: no cluster to deploy to: ") || !strings.Contains(res.Error, "--kubeconfig nor KUBECONFIG") {
		t.Fatalf("deploy with no kubeconfig: exit %d, steps %s, error %q\n%s", code, bundletest.Steps(res), res.Error, out)
	}

	out, code = d.run("KUBECONFIG=" + d.file("kubeconfig", string(cluster.Kubeconfig())))
	res = bundletest.ReadResult(t, d.result)
	if code != 0 || bundletest.Steps(res) != "sandbox succeeded, sync succeeded, api_image succeeded, web succeeded" {
		t.Fatalf("deploy with KUBECONFIG: exit %d, steps %s, error %q\n%s", code, bundletest.Steps(res), res.Error, out)
	}
	digest, _ := img.Digest()
	runs := install.Address + "/outpost/api_image@" + digest.String()
	if got := res.Steps[2].Outputs; got["image"] != runs || got["digest"] != digest.String() || got["repository"] != install.Address+"/outpost/api_image" {
		t.Errorf("api_image's outputs %v, want its image at %s", got, runs)
	}
	checkShopStep(t, res.Steps[3])
	checkShopCluster(t, kubernetes.NewForConfigOrDie(cluster.RESTConfig()), runs)
	if raw, _ := os.ReadFile(d.result); strings.Contains(string(raw), offlineGreeting) || strings.Contains(out, offlineGreeting) {
		t.Errorf("the sensitive input is in the result or the output")
	}
}

// An app of a sandbox alone deploys offline whatever KUBECONFIG names: the
// machine's kubeconfig is read only for a chart that needs it.
func TestOfflineDeployOfTerraformOnly(t *testing.T) {
	bins := testutil.Build(t, ".", "../outpost-runner")
	app := fstest.MapFS{
		"outpost.toml":    {Data: []byte("[app]\nname = \"shop\"\n\n[sandbox]\nsource = \"sandbox\"\n")},
		"sandbox/main.tf": {Data: []byte("output \"greeting\" {\n  value = \"hello\"\n}\n")},
	}
	d := newOfflineDeploy(t, bins, app, nil, nil)
	out, code := d.run("KUBECONFIG=/nonexistent")
	res := bundletest.ReadResult(t, d.result)
	if code != 0 || bundletest.Steps(res) != "sandbox succeeded, sync succeeded" || res.Steps[0].Outputs["greeting"] != "hello" {
		t.Fatalf("deploy with KUBECONFIG=/nonexistent: exit %d, steps %s, outputs %v\n%s", code, bundletest.Steps(res), res.Steps[0].Outputs, out)
	}
}

// checkShopStep checks the chart's step: its release's outputs, and its
// plan's diff and policy verdict.
func checkShopStep(t *testing.T, web protocol.OfflineStep) {
	t.Helper()
	out := web.Outputs
	if out["release_name"] != "web" || out["namespace"] != "shop" || out["revision"] != float64(1) || out["status"] != "deployed" ||
		!strings.Contains(toJSON(out["objects"]), `"Deployment/shop/web"`) {
		t.Errorf("web's outputs %v: want release web in shop, revision 1, deployed, its Deployment among its objects", out)
	}
	if p := web.Policy; p == nil || p.Source != protocol.PolicyCustomer || p.Policy != "customer.deployments" || strings.Join(p.Warn, ",") != "Deployment web" {
		t.Errorf("web's policy verdict %+v: want customer.deployments warning of Deployment web", p)
	}
	if !strings.Contains(web.Log, "outpost: plan: ") || !strings.Contains(web.Log, "+++ b/Deployment/shop/web") {
		t.Errorf("web's log has no plan of its Deployment:\n%s", web.Log)
	}
}

// offlineDeploy is an app's signed bundle, an install file, and
// `outpost-runner offline deploy` of them.
type offlineDeploy struct {
	t                                       *testing.T
	bins, dir, bundle, key, install, result string
	args                                    []string
}

// newOfflineDeploy writes app's config version 1, with the builds builds
// makes (nil: none), in a signed bundle, and an install file of inputs
// (sensitive: the names of those given on the command line).
func newOfflineDeploy(t *testing.T, bins string, app fstest.MapFS, builds func(*appconfig.Config) []releasebundle.Artifact,
	inputs map[string]string, sensitive ...string) *offlineDeploy {
	t.Helper()
	archive, err := appconfig.ArchiveDir(app, ".")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := appconfig.FromArchive(archive)
	if err != nil {
		t.Fatal(err)
	}
	var artifacts []releasebundle.Artifact
	if builds != nil {
		artifacts = builds(cfg)
	}
	d := &offlineDeploy{t: t, bins: bins, dir: t.TempDir()}
	d.bundle, d.key = writeBundle(t, d.dir, archive, artifacts)
	raw, _ := json.Marshal(protocol.OfflineInstall{Format: protocol.OfflineInstallFormat, OrgID: "org_1", AppID: "app_1", AppName: "shop",
		InstallID: "inst_1", InstallName: "acme", Inputs: inputs, SensitiveInputs: sensitive})
	d.install, d.result = d.file("install.json", string(raw)), filepath.Join(d.dir, "result.json")
	d.args = []string{"offline", "deploy", d.bundle, "--install-file", d.install, "--release-key", d.key,
		"--state-dir", filepath.Join(d.dir, "state"), "--result", d.result}
	return d
}

// file writes a file of content in the deploy's directory; it returns its
// path.
func (d *offlineDeploy) file(name, content string) string {
	path := filepath.Join(d.dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		d.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		d.t.Fatal(err)
	}
	return path
}

// run deploys, env added to a clean environment; it returns the output and
// the exit code.
func (d *offlineDeploy) run(env ...string) (string, int) {
	cmd := exec.Command(filepath.Join(d.bins, "outpost-runner"), d.args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + d.dir}, env...)
	out, err := cmd.CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		d.t.Fatal(err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

// checkShopCluster checks what the chart made: the Deployment runs image,
// the ConfigMap holds the sensitive greeting.
func checkShopCluster(t *testing.T, cs kubernetes.Interface, image string) {
	t.Helper()
	ctx := context.Background()
	dep, err := cs.AppsV1().Deployments("shop").Get(ctx, "web", metav1.GetOptions{})
	if err != nil || dep.Spec.Template.Spec.Containers[0].Image != image {
		t.Errorf("Deployment shop/web: %v; want it to run %s", err, image)
	} else {
		t.Logf("Deployment shop/web runs %s", image)
	}
	cm, err := cs.CoreV1().ConfigMaps("shop").Get(ctx, "web-config", metav1.GetOptions{})
	if err != nil || cm.Data["GREETING"] != offlineGreeting {
		t.Errorf("ConfigMap shop/web-config: %v %v; want GREETING the sensitive input", cm.Data, err)
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
