package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/outpost-dev/outpost/contract/status"
)

// kube is a client of the install's cluster, with the kubeconfig its
// cluster component outputs (read from the store: the API never shows it).
func (s *stack) kube(installID string) *kubernetes.Clientset {
	s.t.Helper()
	cluster := s.stepOutputs(installID, "cluster")
	var kubeconfig string
	if err := json.Unmarshal(cluster.Outputs["kubeconfig"].Value, &kubeconfig); err != nil || kubeconfig == "" || !cluster.Outputs["kubeconfig"].Sensitive {
		s.t.Fatalf("the cluster component's kubeconfig output: %v (sensitive %v)", err, cluster.Outputs["kubeconfig"].Sensitive)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig([]byte(kubeconfig))
	if err != nil {
		s.t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		s.t.Fatal(err)
	}
	return cs
}

// helmRevisions lists the revisions helm keeps of a release (its Secrets).
func helmRevisions(s *stack, cs *kubernetes.Clientset, ns, release string) []string {
	s.t.Helper()
	list, err := cs.CoreV1().Secrets(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "owner=helm,name=" + release})
	if err != nil {
		s.t.Fatal(err)
	}
	var out []string
	for _, sec := range list.Items {
		out = append(out, sec.Labels["version"]+":"+sec.Labels["status"])
	}
	return out
}

// checkWebChart follows the example's helm_chart component through a
// provision, a changed value and a teardown: the release and its objects
// hold the templated values; a redeploy is revision 2 with the object
// patched; a teardown leaves neither release nor objects.
func (s *stack) checkWebChart(inst string, op operation, apiURL string) {
	t := s.t
	t.Helper()
	ctx := context.Background()
	web, api, cluster := s.job(op.step(t, "web").ApplyJobID), s.job(op.step(t, "api").ApplyJobID), s.job(op.step(t, "cluster").ApplyJobID)
	if web.StartedAt.Before(api.FinishedAt) || web.StartedAt.Before(cluster.FinishedAt) {
		t.Fatalf("web deployed at %v, before its dependencies api and cluster finished at %v and %v", web.StartedAt, api.FinishedAt, cluster.FinishedAt)
	}
	cs := s.kube(inst)
	cm, err := cs.CoreV1().ConfigMaps("demo").Get(ctx, "web-config", metav1.GetOptions{})
	if err != nil || cm.Data["API_URL"] != apiURL {
		t.Fatalf("ConfigMap demo/web-config: %v %v; want API_URL %q", cm.Data, err, apiURL)
	}
	dep, err := cs.AppsV1().Deployments("demo").Get(ctx, "web", metav1.GetOptions{})
	if err != nil || *dep.Spec.Replicas != 2 {
		t.Fatalf("Deployment demo/web: %v; want 2 replicas (the api_replicas input)", err)
	}
	if revs := helmRevisions(s, cs, "demo", "web"); len(revs) != 1 || revs[0] != "1:deployed" {
		t.Fatalf("release web: %v, want revision 1 deployed", revs)
	}
	var outs struct {
		Outputs map[string]map[string]struct {
			Value any `json:"value"`
		} `json:"outputs"`
	}
	s.do("GET", "/v1/installs/"+inst+"/outputs", nil, &outs)
	release := outs.Outputs["web"]
	if release["release_name"].Value != "web" || release["revision"].Value != float64(1) || release["status"].Value != "deployed" ||
		!strings.Contains(fmt.Sprint(release["objects"].Value), "Deployment/demo/web") {
		t.Fatalf("web's outputs %+v: want the release, revision 1, deployed, and its objects", release)
	}

	// A changed value: a new config version, the component redeployed.
	dir := filepath.Join(t.TempDir(), "app")
	copyDir(t, exampleDir, dir)
	toml := filepath.Join(dir, "components", "web.toml")
	b, err := os.ReadFile(toml)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(toml, append(b, []byte("image = \"registry.example.com/demo/web:1.1.0\"\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	s.syncConfig(dir)
	re := s.waitOp(inst, s.startOp(inst, "/components/web/deploy", nil).ID, 3*time.Minute)
	if re.Status != status.OpSucceeded || !strings.Contains(re.step(t, "web").Plan, "web:1.1.0") {
		t.Fatalf("redeploy web: %s %q %+v", re.Status, re.Error, re.Steps)
	}
	dep, err = cs.AppsV1().Deployments("demo").Get(ctx, "web", metav1.GetOptions{})
	if err != nil || dep.Spec.Template.Spec.Containers[0].Image != "registry.example.com/demo/web:1.1.0" {
		t.Fatalf("Deployment demo/web after the redeploy: %v, image %v", err, dep.Spec.Template.Spec.Containers)
	}
	if revs := helmRevisions(s, cs, "demo", "web"); len(revs) != 2 || !strings.Contains(strings.Join(revs, ","), "2:deployed") {
		t.Fatalf("release web after the redeploy: %v, want revision 2 deployed", revs)
	}

	s.checkRelocatedChartImage(inst, toml, b)

	// Teardown: the release and its objects are gone.
	down := s.waitOp(inst, s.startOp(inst, "/components/web/teardown", nil).ID, 3*time.Minute)
	if down.Status != status.OpSucceeded {
		t.Fatalf("teardown web: %s %q %+v", down.Status, down.Error, down.Steps)
	}
	if revs := helmRevisions(s, cs, "demo", "web"); len(revs) != 0 {
		t.Fatalf("release web after teardown: %v", revs)
	}
	if _, err := cs.AppsV1().Deployments("demo").Get(ctx, "web", metav1.GetOptions{}); err == nil {
		t.Fatal("Deployment demo/web left after teardown")
	}
}

// checkRelocatedChartImage redeploys the web chart with relocate_images and
// its image in a stand-in public registry: the plan shows, and the
// Deployment runs, the image by digest from the install's registry, which
// holds it. toml is web.toml's path, orig its content as the example has it.
func (s *stack) checkRelocatedChartImage(inst, toml string, orig []byte) {
	t := s.t
	t.Helper()
	src, digest := publicImage(t, "demo/web:2.0", 1<<10, 2)
	publicAddr, _, _ := strings.Cut(src, "/")
	relocated := strings.Replace(string(orig), "\n[values]", "\nrelocate_images = true\n\n[values]", 1) + "image = \"" + src + "\"\n"
	if err := os.WriteFile(toml, []byte(relocated), 0o644); err != nil {
		t.Fatal(err)
	}
	s.syncConfig(filepath.Dir(filepath.Dir(toml)))
	addr, auth := s.installRegistryAuth(inst)
	want := addr + "/outpost/web/images/" + strings.ReplaceAll(publicAddr, ":", "-") + "/demo/web@" + digest.String()
	op := s.waitOp(inst, s.startOp(inst, "/components/web/deploy", nil).ID, 3*time.Minute)
	if op.Status != status.OpSucceeded || !strings.Contains(op.step(t, "web").Plan, want) {
		t.Fatalf("redeploy web with relocated images: %s %q; plan %q; want it to show %s", op.Status, op.Error, op.step(t, "web").Plan, want)
	}
	dep, err := s.kube(inst).AppsV1().Deployments("demo").Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil || dep.Spec.Template.Spec.Containers[0].Image != want {
		t.Fatalf("Deployment demo/web with relocated images: %v, containers %+v; want image %s", err, dep.Spec.Template.Spec.Containers, want)
	}
	ref, _ := name.ParseReference(want, name.Insecure)
	if desc, err := remote.Head(ref, remote.WithAuth(auth)); err != nil || desc.Digest != digest {
		t.Fatalf("the install's registry serves %s: %+v %v; want %s", want, desc, err, digest)
	}
	t.Logf("with relocate_images, web runs %s, which the install's registry serves", want)
}
