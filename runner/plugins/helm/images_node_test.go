package helm_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/outpost-dev/outpost/localcluster"
	"github.com/outpost-dev/outpost/localcluster/localclustertest"
	"github.com/outpost-dev/outpost/protocol"
)

// podappChart is a Deployment of one pod running .Values.image, ready when
// its /readyz answers.
var podappChart = map[string]string{
	"Chart.yaml": "apiVersion: v2\nname: podapp\nversion: 0.1.0\n",
	"templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: podapp
spec:
  replicas: 1
  selector: {matchLabels: {app: podapp}}
  template:
    metadata: {labels: {app: podapp}}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - name: podapp
        image: {{ .Values.image }}
        readinessProbe:
          httpGet: {path: /readyz, port: 8080}
          periodSeconds: 1
`,
}

// On a node: the pod of a chart whose image is in a public registry pulls
// it from the install's registry, by digest. The node's containerd trusts
// only the install's registry over HTTP, so it could not pull from the
// public one.
func TestRelocatedImagePulledFromTheInstallRegistryOnANode(t *testing.T) {
	c := localclustertest.StartWithNode(t, localcluster.NodeOptions{})
	e := &env{t: t, c: c, cs: kubernetes.NewForConfigOrDie(c.RESTConfig())}
	public := startRegistry(t, nil)
	install := startRegistry(t, nil) // the kubelet pulls without a pull secret
	if err := c.Node().TrustHTTPRegistry(install.Addr()); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "podapp")
	build := exec.Command("go", "build", "-o", bin, "../../../localcluster/testdata/podapp")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building podapp: %v: %s", err, out)
	}
	img, err := localcluster.BinaryImage(bin, "-line=relocated podapp")
	if err != nil {
		t.Fatal(err)
	}
	ref := public.Addr() + "/acme/podapp:1"
	digest := pushImage(t, ref, img)
	want := install.Addr() + "/outpost/podapp/images/" + strings.ReplaceAll(public.Addr(), ":", "-") + "/acme/podapp@" + digest

	const ns = "images-node"
	e.createNamespace(ns)
	m := e.manifest(protocol.HelmDeploy, ns, "podapp")
	m.ChartArchive = chartArchive(t, "podapp", podappChart)
	m.Values = valuesJSON(t, map[string]any{"image": ref})
	m.Wait, m.TimeoutMS = true, 180_000
	m.Images = &protocol.HelmImages{Registry: protocol.RegistryAccess{Address: install.Addr(), PlainHTTP: true}, Repository: "outpost/podapp/images"}
	succeed[protocol.HelmReleaseOutputs](t, m)

	pods, err := e.cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=podapp"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 || len(pods.Items[0].Status.ContainerStatuses) != 1 {
		t.Fatalf("pods: %+v", pods.Items)
	}
	st := pods.Items[0].Status.ContainerStatuses[0]
	if pods.Items[0].Spec.Containers[0].Image != want || !st.Ready || !strings.HasSuffix(st.ImageID, "@"+digest) {
		t.Errorf("the pod runs %s (image ID %s, ready %v); want %s, ready", pods.Items[0].Spec.Containers[0].Image, st.ImageID, st.Ready, want)
	}
	t.Logf("the pod runs %s, image ID %s", pods.Items[0].Spec.Containers[0].Image, st.ImageID)
}
