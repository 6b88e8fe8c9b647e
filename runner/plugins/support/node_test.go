package support

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/outpost-dev/outpost/localcluster"
	"github.com/outpost-dev/outpost/localcluster/localclustertest"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/plugins"
)

// On a cluster whose node runs pods, a support bundle holds the real log of a container in a
// release's namespace and a logs request prints it, both with the install's sensitive value and
// the credentials the container printed redacted.
func TestRealContainerLogsAreCollectedRedacted(t *testing.T) {
	c := localclustertest.StartWithNode(t, localcluster.NodeOptions{})
	ctx := context.Background()
	const secret = "hunter2-node-secret"
	img := chattyImage(t, c.Node(), "login with password "+secret+" accepted", "GET /api Authorization: Bearer eyJhbGciOi.node.token ok", "plain line")
	cs := kubernetes.NewForConfigOrDie(c.RESTConfig())
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-chatty", Namespace: "demo"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: img, ImagePullPolicy: corev1.PullNever}}}}
	if _, err := cs.CoreV1().Pods("demo").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForLog(t, cs, "demo", "web-chatty", "plain line")

	files, out, err := run(t, protocol.SupportManifest{Kubeconfig: string(c.Kubeconfig()), Redact: []string{secret},
		Releases: []protocol.SupportRelease{{Component: "web", Release: "web", Namespace: "demo"}}})
	if err != nil {
		t.Fatal(err)
	}
	log := files["bundle/cluster/demo/logs/web-chatty/app.log"]
	if !strings.Contains(log, "plain line") || !strings.Contains(log, "login with password [REDACTED] accepted") ||
		!strings.Contains(log, "Authorization: Bearer [REDACTED]") {
		t.Errorf("the container's log in the bundle (parts %v):\n%s", out.Parts, log)
	}
	for name, f := range files {
		if strings.Contains(f, secret) || strings.Contains(f, "eyJhbGciOi.node.token") {
			t.Errorf("%s holds a secret the container printed", name)
		}
	}
	if !strings.Contains(files["bundle/cluster/demo/pods.txt"], "web-chatty") {
		t.Errorf("pods.txt:\n%s", files["bundle/cluster/demo/pods.txt"])
	}

	var printed bytes.Buffer
	p := NewKubeLogs()
	raw, _ := json.Marshal(protocol.KubeLogsManifest{Kubeconfig: string(c.Kubeconfig()), Namespace: "demo", Workload: "web", Redact: []string{secret}})
	if err := p.Validate(raw); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Execute(ctx, plugins.Run{Dir: t.TempDir(), Stdout: &printed, Stderr: &printed}); err != nil {
		t.Fatal(err)
	}
	if got := printed.String(); !strings.Contains(got, "login with password [REDACTED] accepted") || strings.Contains(got, secret) ||
		strings.Contains(got, "eyJhbGciOi.node.token") {
		t.Errorf("the logs request printed:\n%s", got)
	}
}

// chattyImage builds testdata/chatty (it prints its arguments every second) into an image loaded
// into the node, and returns its name.
func chattyImage(t *testing.T, n *localcluster.Node, lines ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "chatty")
	build := exec.Command("go", "build", "-o", bin, "./testdata/chatty")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building chatty: %v\n%s", err, out)
	}
	img, err := localcluster.BinaryImage(bin, lines...)
	if err != nil {
		t.Fatal(err)
	}
	const ref = "outpost.local/chatty:1"
	tb := filepath.Join(t.TempDir(), "chatty.tar")
	if err := localcluster.WriteImageTarball(tb, ref, img); err != nil {
		t.Fatal(err)
	}
	if err := n.LoadImage(context.Background(), tb); err != nil {
		t.Fatal(err)
	}
	return ref
}

// waitForLog waits until the pod's log holds want.
func waitForLog(t *testing.T, cs kubernetes.Interface, ns, pod, want string) {
	t.Helper()
	var last string
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		b, err := cs.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{}).DoRaw(context.Background())
		if err == nil && strings.Contains(string(b), want) {
			return
		}
		last = string(b)
		if err != nil {
			last = err.Error()
		}
	}
	t.Fatalf("pod %s/%s never logged %q; last: %s", ns, pod, want, last)
}
