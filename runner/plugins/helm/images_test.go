package helm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/registry"
)

// installPassword guards the install's registry; it must never show.
const installPassword = "install-Password-never-shown"

// publicImage starts an open registry (a public one, to the chart) and
// pushes a random image to repo:tag there; it returns the image's
// reference by tag and its digest.
func publicImage(t *testing.T, srv *registry.Server, repo, tag string) (string, string) {
	t.Helper()
	img, err := random.Image(1024, 2)
	if err != nil {
		t.Fatal(err)
	}
	ref := srv.Addr() + "/" + repo + ":" + tag
	return ref, pushImage(t, ref, img)
}

// pushImage pushes img to ref (a registry over plain HTTP) and returns its
// digest.
func pushImage(t *testing.T, ref string, img v1.Image) string {
	t.Helper()
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img); err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

// startRegistry starts a registry for the test.
func startRegistry(t *testing.T, auth registry.Authorizer) *registry.Server {
	t.Helper()
	srv, err := registry.Start(context.Background(), registry.Config{Auth: auth})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// installDigest is the digest the install's registry serves for ref
// ("" when it holds none).
func installDigest(t *testing.T, ref string) string {
	t.Helper()
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Head(r, remote.WithAuth(&authn.Basic{Username: "install", Password: installPassword}))
	if err != nil {
		return ""
	}
	return desc.Digest.String()
}

// sidecar is shop with an init container running another image.
var sidecar = with(shop, map[string]string{
	"values.yaml": strings.Replace(shop["values.yaml"], "replicas: 1\n", "replicas: 1\ninit: registry.example/init:1\n", 1),
	"templates/deployment.yaml": strings.Replace(shop["templates/deployment.yaml"], "      containers:\n",
		"      initContainers:\n        - name: init\n          image: \"{{ .Values.init }}\"\n      containers:\n", 1),
})

// TestImagesRelocatedToTheInstallRegistry: a chart whose images are in a
// public registry runs them, by digest, from the install's registry, which
// the deploy (not the plan) copied them into; a plan shows the references
// the deploy sets.
func TestImagesRelocatedToTheInstallRegistry(t *testing.T) {
	e := newEnv(t)
	public := startRegistry(t, nil)
	install := startRegistry(t, registry.Static{Username: "install", Password: installPassword})
	web, webDigest := publicImage(t, public, "library/web", "1.0")
	initImage, initDigest := publicImage(t, public, "tools/init", "2")
	host := strings.ReplaceAll(public.Addr(), ":", "-")
	wantWeb := install.Addr() + "/outpost/shop/images/" + host + "/library/web@" + webDigest
	wantInit := install.Addr() + "/outpost/shop/images/" + host + "/tools/init@" + initDigest

	const ns = "shop-images"
	m := e.manifest(protocol.HelmPlan, ns, "shop")
	m.CreateNamespace = true
	e.createNamespace(ns)
	m.ChartArchive = chartArchive(t, "shop", sidecar)
	m.Values = valuesJSON(t, map[string]any{"image": web, "init": initImage})
	m.Images = &protocol.HelmImages{
		Registry:   protocol.RegistryAccess{Address: install.Addr(), Username: "install", Password: installPassword, PlainHTTP: true},
		Repository: "outpost/shop/images",
	}

	plan, logs := succeed[protocol.HelmPlanOutputs](t, m)
	if !strings.Contains(plan.Diff, "image: "+wantWeb+"\n") || !strings.Contains(plan.Diff, "image: "+wantInit+"\n") || strings.Contains(plan.Diff, public.Addr()) {
		t.Errorf("the plan does not show the relocated images %s and %s:\n%s", wantWeb, wantInit, plan.Diff)
	}
	if got := installDigest(t, wantWeb); got != "" {
		t.Errorf("a plan copied %s into the install's registry", wantWeb)
	}

	m.Operation = protocol.HelmDeploy
	_, logs2 := succeed[protocol.HelmReleaseOutputs](t, m)
	logs += logs2
	dep, err := e.cs.AppsV1().Deployments(ns).Get(context.Background(), "shop", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec := dep.Spec.Template.Spec
	if spec.Containers[0].Image != wantWeb || spec.InitContainers[0].Image != wantInit {
		t.Errorf("the Deployment runs %s and %s; want %s and %s", spec.Containers[0].Image, spec.InitContainers[0].Image, wantWeb, wantInit)
	}
	for ref, digest := range map[string]string{wantWeb: webDigest, wantInit: initDigest} {
		if got := installDigest(t, ref); got != digest {
			t.Errorf("the install's registry serves %q for %s", got, ref)
		}
	}
	// By its tag too, for whoever looks at the registry.
	if got := installDigest(t, install.Addr()+"/outpost/shop/images/"+host+"/library/web:1.0"); got != webDigest {
		t.Errorf("the install's registry tags web:1.0 as %q; want %s", got, webDigest)
	}
	if strings.Contains(logs, installPassword) {
		t.Errorf("the logs show the install registry's password:\n%s", logs)
	}

	// Listed images only: the init image is listed, web is not and stays.
	m.Operation = protocol.HelmPlan
	m.Images.Images = []string{initImage}
	plan, logs = succeed[protocol.HelmPlanOutputs](t, m)
	initChanged := false
	for _, l := range strings.Split(plan.Diff, "\n") {
		initChanged = initChanged || (strings.HasPrefix(l, "+ ") || strings.HasPrefix(l, "- ")) && strings.Contains(l, "tools/init")
	}
	if !strings.Contains(plan.Diff, "+        image: "+web+"\n") || initChanged || !strings.Contains(logs, "image "+web+" is not in the component's images") {
		t.Errorf("with images = [%s], the plan:\n%s\nlogs:\n%s", initImage, plan.Diff, logs)
	}

	// An image the public registry does not hold fails the plan, naming it.
	m.Images.Images = nil
	m.Values = valuesJSON(t, map[string]any{"image": public.Addr() + "/library/web:9.9", "init": initImage})
	if msg, _ := fail(t, m); !strings.Contains(msg, "image "+public.Addr()+"/library/web:9.9") || !strings.Contains(msg, "manifest unknown") {
		t.Errorf("a plan with a missing image: %q", msg)
	}
}

// TestImagesOfflineComeFromTheBundle: offline, a listed image the install's
// registry holds already (an offline deploy's sync loaded it from the
// bundle) runs from there by digest, its source registry gone; an image
// the chart runs that the bundle does not hold fails the plan, naming it
// and saying to list it in images.
func TestImagesOfflineComeFromTheBundle(t *testing.T) {
	e := newEnv(t)
	public := startRegistry(t, nil)
	install := startRegistry(t, registry.Static{Username: "install", Password: installPassword})
	web, webDigest := publicImage(t, public, "library/web", "1.0")
	initImage, _ := publicImage(t, public, "tools/init", "2")
	at := "/outpost/shop/images/" + strings.ReplaceAll(public.Addr(), ":", "-") + "/library/web"
	copyImage(t, web, install.Addr()+at+":loaded")
	public.Close() // no network: the source registry is unreachable
	wantWeb := install.Addr() + at + "@" + webDigest

	const ns = "shop-offline"
	m := e.manifest(protocol.HelmPlan, ns, "shop")
	m.CreateNamespace = true
	e.createNamespace(ns)
	m.ChartArchive = chartArchive(t, "shop", shop)
	m.Values = valuesJSON(t, map[string]any{"image": web})
	m.Images = &protocol.HelmImages{
		Registry:   protocol.RegistryAccess{Address: install.Addr(), Username: "install", Password: installPassword, PlainHTTP: true},
		Repository: "outpost/shop/images", Images: []string{web}, Bundled: map[string]string{web: webDigest}, Offline: true,
	}
	if plan, _ := succeed[protocol.HelmPlanOutputs](t, m); !strings.Contains(plan.Diff, "image: "+wantWeb+"\n") {
		t.Errorf("the plan does not run the bundled image %s:\n%s", wantWeb, plan.Diff)
	}
	m.Operation = protocol.HelmDeploy
	succeed[protocol.HelmReleaseOutputs](t, m)
	dep, err := e.cs.AppsV1().Deployments(ns).Get(context.Background(), "shop", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := dep.Spec.Template.Spec.Containers[0].Image; got != wantWeb {
		t.Errorf("the Deployment runs %s; want %s", got, wantWeb)
	}

	m.Operation = protocol.HelmPlan
	m.ChartArchive = chartArchive(t, "shop", sidecar)
	m.Values = valuesJSON(t, map[string]any{"image": web, "init": initImage})
	msg, _ := fail(t, m)
	if want := "image " + initImage + ": the chart runs it but the component's images do not list it"; !strings.Contains(msg, want) ||
		!strings.Contains(msg, "list it in images") {
		t.Errorf("offline, an image the bundle does not hold: %q; want %q and to list it in images", msg, want)
	}
	m.Images.Images = nil // every image relocated: the unbundled one still fails, naming it
	if msg, _ := fail(t, m); !strings.Contains(msg, "image "+initImage+": the bundle does not hold it: list it in the component's images") {
		t.Errorf("offline, relocating every image, one the bundle does not hold: %q", msg)
	}
}

// copyImage copies the image src into the install's registry at dst.
func copyImage(t *testing.T, src, dst string) {
	t.Helper()
	from, _ := name.ParseReference(src, name.Insecure)
	to, _ := name.ParseReference(dst, name.Insecure)
	img, err := remote.Image(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(to, img, remote.WithAuth(&authn.Basic{Username: "install", Password: installPassword})); err != nil {
		t.Fatal(err)
	}
}
