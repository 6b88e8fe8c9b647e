package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	ggcr "github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/localcluster/localclustertest"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/releasebundle"
	"github.com/outpost-dev/outpost/releasebundle/bundletest"
	"github.com/outpost-dev/outpost/runner/ociclient"
)

// thirdPartyApp is an app whose chart runs a third-party image it lists
// for relocation, and no component of its own for that image.
func thirdPartyApp(image string) fstest.MapFS {
	files := map[string]string{
		"outpost.toml": "[app]\nname = \"shop\"\n\n[sandbox]\nsource = \"sandbox\"\n\n[sandbox.variables]\nregistry = \"{{ .install.inputs.registry }}\"\n\n" +
			"[[inputs]]\nname = \"registry\"\ntype = \"string\"\nrequired = true\n",
		"sandbox/main.tf": "variable \"registry\" {\n  type = string\n}\n\noutput \"registry_address\" {\n  value = var.registry\n}\n\n" +
			"output \"registry_plain_http\" {\n  value = true\n}\n",
		"components/web.toml": "name = \"web\"\ntype = \"helm_chart\"\nsource = \"charts/web\"\nnamespace = \"shop\"\ncreate_namespace = true\n" +
			"relocate_images = true\nimages = [\"" + image + "\"]\n\n[values]\nimage = \"" + image + "\"\n",
		"charts/web/Chart.yaml": "apiVersion: v2\nname: web\nversion: 0.1.0\n",
		"charts/web/templates/web.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n" +
			"  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n" +
			"      containers:\n        - name: web\n          image: {{ .Values.image }}\n",
	}
	return mapFS(files)
}

// A chart relocating a third-party image, built by the runner's chart
// build (which copies the image beside the chart) and bundled with that
// copy, deploys offline with the image's registry stopped: the Deployment
// runs it from the install's registry by digest, and that registry holds
// the image's blobs.
func TestOfflineDeployOfAChartRelocatingAThirdPartyImage(t *testing.T) {
	cluster := localclustertest.Start(t)
	bins := testutil.Build(t, ".", "../outpost-runner")
	vendor, install := startRegistry(t), startRegistry(t)
	thirdParty, err := registry.Start(context.Background(), registry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer thirdParty.Close()
	img, err := random.Image(1<<10, 2)
	if err != nil {
		t.Fatal(err)
	}
	image := thirdParty.Addr() + "/library/nginx:1.27"
	ref, _ := name.ParseReference(image, name.Insecure)
	if err := ggcr.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	d := newOfflineDeploy(t, bins, thirdPartyApp(image), func(cfg *appconfig.Config) []releasebundle.Artifact {
		return chartBuildWithImages(t, bins, vendor, cfg)
	}, map[string]string{"registry": install.Address})
	thirdParty.Close() // offline: the image's own registry is gone

	out, code := d.run("KUBECONFIG=" + d.file("kubeconfig", string(cluster.Kubeconfig())))
	res := bundletest.ReadResult(t, d.result)
	if code != 0 || bundletest.Steps(res) != "sandbox succeeded, sync succeeded, web succeeded" {
		t.Fatalf("offline deploy: exit %d, steps %s, error %q\n%s", code, bundletest.Steps(res), res.Error, out)
	}
	imgDigest, _ := img.Digest()
	repo := "outpost/web/images/" + strings.ReplaceAll(thirdParty.Addr(), ":", "-") + "/library/nginx"
	runs := install.Address + "/" + repo + "@" + imgDigest.String()
	cs := kubernetes.NewForConfigOrDie(cluster.RESTConfig())
	dep, err := cs.AppsV1().Deployments("shop").Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil || dep.Spec.Template.Spec.Containers[0].Image != runs {
		t.Fatalf("Deployment shop/web: %v; want it to run %s", err, runs)
	}
	if !strings.Contains(res.Steps[1].Log, "loaded web image "+image) {
		t.Errorf("the sync step's log does not name the image it loaded:\n%s", res.Steps[1].Log)
	}
	src, err := ociclient.Repository(install, repo)
	if err != nil {
		t.Fatal(err)
	}
	layers, _ := img.Layers()
	for _, l := range layers {
		h, _ := l.Digest()
		size, _ := l.Size()
		if ok, err := src.Blobs().Exists(context.Background(), ocispec.Descriptor{Digest: digest.Digest(h.String()), Size: size}); !ok || err != nil {
			t.Errorf("the install's registry lacks layer %s of the image: %v", h, err)
		}
	}
}

// chartBuildWithImages builds the app's chart by the runner's build job,
// which copies the images the component lists beside it, and returns the
// bundle's artifacts: the chart and each image, as an export makes them.
func chartBuildWithImages(t *testing.T, bins string, vendor protocol.RegistryAccess, cfg *appconfig.Config) []releasebundle.Artifact {
	t.Helper()
	in, err := cfg.BuildInput("web")
	if err != nil {
		t.Fatal(err)
	}
	m := protocol.OCIManifest{Operation: protocol.OCIBuildHelmChart, Component: "web", Source: in.Source, Images: in.Images,
		Destination: protocol.OCIDestination{Registry: vendor, Repository: "org_1/app_1", Tag: "web.bld_web"}}
	raw, _ := json.Marshal(m)
	res := runJob(t, filepath.Join(bins, "outpost-runner-helm"), protocol.Job{ID: "build_web", Type: protocol.JobTypeHelmChart, Attempt: 1, Manifest: raw})
	var a protocol.Artifact
	if res.Status != protocol.StatusSucceeded || json.Unmarshal(res.Outputs, &a) != nil || len(a.Images) != 1 {
		t.Fatalf("build of web: %+v", res)
	}
	open := func(repo string) *remote.Repository {
		r, err := ociclient.Repository(vendor, repo)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	out := []releasebundle.Artifact{{Component: "web", ComponentType: "helm_chart", BuildID: "bld_web", Digest: a.Digest, Source: open(a.Repository)}}
	for _, img := range a.Images {
		out = append(out, releasebundle.Artifact{Component: "web", ComponentType: "helm_chart", BuildID: "bld_web", Image: img.Reference,
			Digest: img.Digest, Source: open(img.Repository)})
	}
	return out
}
