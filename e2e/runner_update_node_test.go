package e2e

import (
	"context"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/outpost-dev/outpost/charts/chartstest"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/localcluster"
	"github.com/outpost-dev/outpost/localcluster/localclustertest"
	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/runnerrelease"
)

// Helm mode on a cluster that runs pods: the runner chart's Deployment runs
// runner image v1, pulled from a registry on loopback. An update to v2 rolls
// the Deployment to the image digest v2's signed release names; the new pod takes the update's health job before it is
// ready (the same gate as a new binary's), Kubernetes then stops the old pod,
// and the update succeeds: one pod is left, on image v2, and later jobs run
// on v2.
func TestRunnerSelfUpdateHelmModeOnANode(t *testing.T) {
	cluster := localclustertest.StartWithNode(t, localcluster.NodeOptions{})
	node := cluster.Node()
	// Pods reach the host (the gateway, the API server, the registries)
	// through proxies on the bridge's address.
	onBridge := net.JoinHostPort(node.Gateway().String(), "0")
	bridged := func(addr string) string { return newFaultProxyOn(t, onBridge, addr).addr }
	s := newStack(t, stackOptions{vendorRegistry: bridged})
	ctx := context.Background()
	s.setInstallRegistry(ctx, bridged(s.giveInstallRegistry(ctx).Addr()))
	images, err := registry.Start(ctx, registry.Config{}) // the vendor's runner images, which the pods pull
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { images.Close() })
	reg := images.Addr()
	if err := node.TrustHTTPRegistry(reg); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	helmBin := buildStatic(t, dir, "../cmd/outpost-runner-helm", "")
	var v2Digest string
	for _, v := range []string{"v1", "v2"} {
		bin := buildStatic(t, filepath.Join(dir, v), "../cmd/outpost-runner", v)
		digest := pushRunnerImage(t, reg+"/outpost-runner:"+v, bin, helmBin)
		if v == "v2" {
			v2Digest = digest
			if _, err := runnerrelease.Publish(ctx, s.store, runnerrelease.Registry{Address: s.registry.Addr(), PlainHTTP: true},
				runnerrelease.Release{Version: v, Binary: bin, ImageDigest: digest, Key: testReleaseKey}); err != nil {
				t.Fatalf("publish %s: %v", v, err)
			}
		}
	}

	gu, err := url.Parse(s.gateway)
	if err != nil {
		t.Fatal(err)
	}
	apiURL, err := url.Parse(cluster.Server())
	if err != nil {
		t.Fatal(err)
	}

	cs := kubernetes.NewForConfigOrDie(cluster.RESTConfig())
	const ns = "outpost"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "runner-kubeconfig"},
		Data: map[string][]byte{"config": podKubeconfig(t, cluster, bridged(apiURL.Host))}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	installRunnerChart(t, cluster, ns, map[string]any{
		"gateway": map[string]any{"url": "http://" + bridged(gu.Host)},
		"token":   map[string]any{"value": s.runTok},
		"image":   map[string]any{"repository": reg + "/outpost-runner", "tag": "v1"},
		"update":  map[string]any{"auto": true},
		"runner": map[string]any{"concurrency": 2,
			"extraEnv":          []any{map[string]any{"name": "KUBECONFIG", "value": "/etc/outpost-kube/config"}},
			"extraVolumes":      []any{map[string]any{"name": "kubeconfig", "secret": map[string]any{"secretName": "runner-kubeconfig"}}},
			"extraVolumeMounts": []any{map[string]any{"name": "kubeconfig", "mountPath": "/etc/outpost-kube", "readOnly": true}}},
		"resources": map[string]any{"requests": map[string]any{"cpu": "10m", "memory": "32Mi"}},
	})
	waitFor(t, 3*time.Minute, "the runner pod on v1 reaching the control plane", func() bool { return s.runnerVersionNow() == "v1" })
	if v := s.waitJobVersion(s.enqueueNoop(t, "before-helm-update", 0)); v != "v1" {
		t.Fatalf("a job before the update ran on %q, want v1", v)
	}

	u := s.startRunnerUpdate("v2", 180)
	u = s.waitRunnerUpdate(u.ID, 5*time.Minute)
	if u.Status != string(status.RunnerUpdateSucceeded) || u.FromVersion != "v1" {
		t.Fatalf("update to v2: %s %q (from %q)", u.Status, u.Reason, u.FromVersion)
	}
	var pods []corev1.Pod
	waitFor(t, 2*time.Minute, "one runner pod left, on v2 and ready", func() bool {
		list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pods = list.Items
		return len(pods) == 1 && pods[0].Spec.Containers[0].Image == reg+"/outpost-runner@"+v2Digest && podReady(pods[0])
	})
	// The old pod may still have reported v1 before it stopped: the new one says v2 at its next heartbeat.
	waitFor(t, time.Minute, "the runner reporting v2", func() bool { return s.runnerVersionNow() == "v2" })
	// The new pod was on trial (not ready, taking only the health job) until it ran the health job.
	log, err := cs.CoreV1().Pods(ns).GetLogs(pods[0].Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"this version is on trial in an update", "the update's health check passed"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the v2 pod's log does not say %q:\n%s", want, log)
		}
	}
	if v := s.waitJobVersion(s.enqueueNoop(t, "after-helm-update", 0)); v != "v2" {
		t.Errorf("a job after the update ran on %q, want v2", v)
	}
}

// buildStatic builds the command pkg as a static binary (for an image FROM
// scratch), with the runner version set (and testReleaseKey trusted) when
// version is not "".
func buildStatic(t *testing.T, dir, pkg, version string) string {
	t.Helper()
	out := filepath.Join(dir, filepath.Base(pkg))
	args := []string{"build", "-o", out}
	if version != "" {
		args = append(args, "-ldflags", "-X github.com/outpost-dev/outpost/runner.Version="+version+
			" -X github.com/outpost-dev/outpost/runner.ReleaseKeys="+runnerrelease.PublicKey(testReleaseKey))
	}
	build := exec.Command("go", append(args, pkg)...)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", pkg, err, b)
	}
	return out
}

// pushRunnerImage pushes a runner image (the runner and outpost-runner-helm
// next to it, as the real image has them) to ref, and returns its digest.
func pushRunnerImage(t *testing.T, ref, runnerBin, helmBin string) string {
	t.Helper()
	img, err := localcluster.BinariesImage([]string{runnerBin, helmBin})
	if err != nil {
		t.Fatal(err)
	}
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

// podKubeconfig is the cluster's admin kubeconfig with the API server at
// addr (a proxy on the bridge), its certificate checked for "localhost".
func podKubeconfig(t *testing.T, c *localcluster.Cluster, addr string) []byte {
	t.Helper()
	cfg, err := clientcmd.Load(c.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, cl := range cfg.Clusters {
		cl.Server, cl.TLSServerName = "https://"+addr, "localhost"
	}
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// installRunnerChart is `helm install outpost-runner <the runner chart> -n ns` with vals.
func installRunnerChart(t *testing.T, c *localcluster.Cluster, ns string, vals map[string]any) {
	t.Helper()
	if err := chartstest.InstallRunner(c.KubeconfigPath(), ns, vals); err != nil {
		t.Fatalf("helm install: %v", err)
	}
}

func podReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
