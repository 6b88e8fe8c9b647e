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

// An app of a container_image and a chart running it, built by the
// runner's build jobs and exported in a signed bundle, deployed by
// `outpost-runner offline deploy` into a real API server: with no
// kubeconfig the chart's step fails naming the component and what to give;
// with KUBECONFIG set the image's step gives its place in the install's
// registry, by digest, and the chart is deployed from the bundle running
// that image, its sensitive value in the cluster but not in the result.
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
	archive, err := appconfig.ArchiveDir(shopApp(upstream), ".")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := appconfig.FromArchive(archive)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bundle, key := writeBundle(t, dir, archive, vendorBuilds(t, bins, vendor, cfg))
	installFile := filepath.Join(dir, "install.json")
	raw, _ := json.Marshal(protocol.OfflineInstall{Format: protocol.OfflineInstallFormat, OrgID: "org_1", AppID: "app_1", AppName: "shop",
		InstallID: "inst_1", InstallName: "acme", Inputs: map[string]string{"registry": install.Address}, SensitiveInputs: []string{"greeting"}})
	if err := os.WriteFile(installFile, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, cluster.Kubeconfig(), 0o600); err != nil {
		t.Fatal(err)
	}
	result := filepath.Join(dir, "result.json")
	deploy := func(env ...string) (string, int) {
		cmd := exec.Command(filepath.Join(bins, "outpost-runner"), "offline", "deploy", bundle, "--install-file", installFile,
			"--release-key", key, "--state-dir", filepath.Join(dir, "state"), "--input", "greeting="+offlineGreeting, "--result", result)
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}, env...)
		out, err := cmd.CombinedOutput()
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			t.Fatal(err)
		}
		return string(out), cmd.ProcessState.ExitCode()
	}

	out, code := deploy()
	res := readOfflineResult(t, result)
	if code != 1 || offlineSteps(res) != "sandbox succeeded, sync succeeded, api_image succeeded, web failed" ||
		!strings.Contains(res.Error, "step web: component web: no cluster to deploy to: ") || !strings.Contains(res.Error, "--kubeconfig nor KUBECONFIG") {
		t.Fatalf("deploy with no kubeconfig: exit %d, steps %s, error %q\n%s", code, offlineSteps(res), res.Error, out)
	}

	out, code = deploy("KUBECONFIG=" + kubeconfig)
	res = readOfflineResult(t, result)
	if code != 0 || offlineSteps(res) != "sandbox succeeded, sync succeeded, api_image succeeded, web succeeded" {
		t.Fatalf("deploy with KUBECONFIG: exit %d, steps %s, error %q\n%s", code, offlineSteps(res), res.Error, out)
	}
	digest, _ := img.Digest()
	runs := install.Address + "/outpost/api_image@" + digest.String()
	if got := res.Steps[2].Outputs; got["image"] != runs || got["digest"] != digest.String() || got["repository"] != install.Address+"/outpost/api_image" {
		t.Errorf("api_image's outputs %v, want its image at %s", got, runs)
	}
	web := res.Steps[3].Outputs
	if web["release_name"] != "web" || web["namespace"] != "shop" || web["revision"] != float64(1) || web["status"] != "deployed" ||
		!strings.Contains(toJSON(web["objects"]), `"Deployment/shop/web"`) {
		t.Errorf("web's outputs %v: want release web in shop, revision 1, deployed, its Deployment among its objects", web)
	}
	checkShopCluster(t, kubernetes.NewForConfigOrDie(cluster.RESTConfig()), runs)
	if raw, _ := os.ReadFile(result); strings.Contains(string(raw), offlineGreeting) || strings.Contains(out, offlineGreeting) {
		t.Errorf("the sensitive input is in the result or the output")
	}
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

func readOfflineResult(t *testing.T, path string) protocol.OfflineResult {
	t.Helper()
	var r protocol.OfflineResult
	raw, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(raw, &r) != nil {
		t.Fatalf("result %s: %v\n%s", path, err, raw)
	}
	return r
}

// offlineSteps is "name status, …" of a result's steps.
func offlineSteps(r protocol.OfflineResult) string {
	var s []string
	for _, st := range r.Steps {
		s = append(s, st.Name+" "+st.Status)
	}
	return strings.Join(s, ", ")
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
