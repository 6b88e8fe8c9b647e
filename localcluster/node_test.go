package localcluster_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/outpost-dev/outpost/localcluster"
	"github.com/outpost-dev/outpost/localcluster/localclustertest"
	"github.com/outpost-dev/outpost/registry"
)

// buildPodapp builds testdata/podapp, a static binary.
func buildPodapp(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "podapp")
	build := exec.Command("go", "build", "-o", bin, "./testdata/podapp")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building podapp: %v: %s", err, out)
	}
	return bin
}

// pushPodapp pushes images of bin to reg as podapp:<tag> for each tag, run
// with the tag's arguments; it returns the references.
func pushPodapp(t *testing.T, reg, bin string, tags map[string][]string) map[string]string {
	t.Helper()
	refs := map[string]string{}
	for tag, args := range tags {
		img, err := localcluster.BinaryImage(bin, args...)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := name.ParseReference(reg+"/podapp:"+tag, name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(ref, img); err != nil {
			t.Fatalf("pushing %s: %v", ref, err)
		}
		refs[tag] = ref.String()
	}
	return refs
}

func TestNodeRunsADeploymentThroughRollingUpdates(t *testing.T) {
	sysctls := readSysctls(t)
	c := localclustertest.StartWithNode(t, localcluster.NodeOptions{})
	node := c.Node()
	// A registry trusted after the start: containerd reads its hosts
	// directory at each pull.
	reg, err := registry.Start(t.Context(), registry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close() })
	if err := node.TrustHTTPRegistry(reg.Addr()); err != nil {
		t.Fatal(err)
	}
	bin := buildPodapp(t)
	refs := pushPodapp(t, reg.Addr(), bin, map[string][]string{
		"v1":    {"-line=podapp v1 says hello"},
		"v2":    {"-line=podapp v2 says hello"},
		"never": {"-line=podapp never ready", "-ready=false"},
	})
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()

	// The pods reach the host on the bridge's gateway address.
	ln, err := net.Listen("tcp", net.JoinHostPort(node.Gateway().String(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	hello := make(chan string, 4)
	go acceptLines(ln, hello)

	d := podappDeployment(refs["v1"], ln.Addr().String())
	if _, err := cs.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	v1Pod := waitRolledOut(ctx, t, cs, refs["v1"])
	waitLog(ctx, t, cs, v1Pod, "podapp v1 says hello")
	select {
	case got := <-hello:
		if got != "hello from podapp v1 says hello" {
			t.Errorf("the gateway listener got %q", got)
		}
	case <-ctx.Done():
		t.Fatal("no pod reached the listener on the gateway address")
	}
	if ip := net.ParseIP(v1Pod.Status.PodIP); ip == nil || !node.Subnet().Contains(ip) {
		t.Errorf("pod IP %q; want one in the bridge's subnet %s", v1Pod.Status.PodIP, node.Subnet())
	}

	// The host reaches the pods through their Service.
	svc := serviceProxy(ctx, t, c, cs)
	if got := getLine(t, svc); got != "podapp v1 says hello" {
		t.Errorf("through the Service: %q, want v1's line", got)
	}

	// A rolling update: the new pod becomes ready, then the old one goes.
	setImage(ctx, t, cs, refs["v2"])
	v2Pod := waitRolledOut(ctx, t, cs, refs["v2"])
	waitLog(ctx, t, cs, v2Pod, "podapp v2 says hello")
	waitLine(ctx, t, svc, "podapp v2 says hello")
	if _, err := cs.CoreV1().Pods("default").Get(ctx, v1Pod.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the v1 pod %s after the rollout: %v; want it gone", v1Pod.Name, err)
	}

	// A version that never becomes ready: the rollout stalls, the old pod serves on.
	setImage(ctx, t, cs, refs["never"])
	waitStalled(ctx, t, cs)
	checkStalled(ctx, t, cs, v2Pod, refs["never"])
	waitLog(ctx, t, cs, v2Pod, "podapp v2 says hello")
	for range 10 { // never to the pod that is not ready
		if got := getLine(t, svc); got != "podapp v2 says hello" {
			t.Fatalf("through the Service during the stalled rollout: %q, want only the ready v2 pod's line", got)
		}
	}

	runLoadedImage(ctx, t, cs, node, bin)
	stopAndCheckCleanup(t, c) // closes the service proxy too
	if after := readSysctls(t); after != sysctls {
		t.Errorf("kernel settings after Stop:\n%s\nbefore Start:\n%s", after, sysctls)
	}
}

// serviceProxy makes the Service podapp (port http: 8080) and a proxy to it
// on the host, closed when the test ends.
func serviceProxy(ctx context.Context, t *testing.T, c *localcluster.Cluster, cs kubernetes.Interface) *localcluster.ServiceProxy {
	t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "podapp", Namespace: "default"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "podapp"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}
	if _, err := cs.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p, err := c.ProxyService("default", "podapp", "http", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// getLine asks podapp for its line through the proxy: "" when no pod
// answers.
func getLine(t *testing.T, p *localcluster.ServiceProxy) string {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	res, err := client.Get("http://" + p.Addr() + "/line")
	if err != nil {
		return ""
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return strings.TrimSpace(string(b))
}

// waitLine waits until the Service answers line (the EndpointSlices follow
// the pods' readiness a moment later).
func waitLine(ctx context.Context, t *testing.T, p *localcluster.ServiceProxy, line string) {
	t.Helper()
	var got string
	for got = getLine(t, p); got != line; got = getLine(t, p) {
		if !sleep(ctx) {
			t.Fatalf("through the Service: %q, want %q", got, line)
		}
	}
}

// readSysctls reads the kernel settings the kubelet changes.
func readSysctls(t *testing.T) string {
	t.Helper()
	var s strings.Builder
	for _, k := range []string{"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops", "kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes"} {
		b, err := os.ReadFile("/proc/sys/" + k)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&s, "%s=%s", k, b)
	}
	return s.String()
}

// checkStalled checks the pods of a stalled rollout: the old pod, still
// ready, and a running, never-ready one of image.
func checkStalled(ctx context.Context, t *testing.T, cs kubernetes.Interface, old *corev1.Pod, image string) {
	t.Helper()
	pods := podappPods(ctx, t, cs)
	var sawNew bool
	for _, p := range pods {
		switch p.Spec.Containers[0].Image {
		case old.Spec.Containers[0].Image:
			if p.Name != old.Name || !podReady(&p) {
				t.Errorf("old pod %s ready %v; want %s, still ready", p.Name, podReady(&p), old.Name)
			}
		case image:
			sawNew = true
			if podReady(&p) || p.Status.Phase != corev1.PodRunning {
				t.Errorf("the never-ready pod %s: phase %s, ready %v; want running, not ready", p.Name, p.Status.Phase, podReady(&p))
			}
		}
	}
	if !sawNew || len(pods) != 2 {
		t.Errorf("pods after the stalled rollout: %s; want the old pod and a never-ready one", describePods(pods))
	}
}

// runLoadedImage runs a pod of an image imported from a tarball
// (Node.LoadImage), never pulled, and reads its log.
func runLoadedImage(ctx context.Context, t *testing.T, cs kubernetes.Interface, node *localcluster.Node, bin string) {
	t.Helper()
	img, err := localcluster.BinaryImage(bin, "-line=podapp loaded from a tarball")
	if err != nil {
		t.Fatal(err)
	}
	tarball := filepath.Join(t.TempDir(), "podapp.tar")
	const ref = "outpost.local/podapp:loaded"
	if err := localcluster.WriteImageTarball(tarball, ref, img); err != nil {
		t.Fatal(err)
	}
	if err := node.LoadImage(ctx, tarball); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "loaded", Namespace: "default"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "podapp", Image: ref, ImagePullPolicy: corev1.PullNever}}},
	}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitLog(ctx, t, cs, pod, "podapp loaded from a tarball")
}

// acceptLines sends the first line of each connection to lines.
func acceptLines(ln net.Listener, lines chan<- string) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		line, _ := bufio.NewReader(conn).ReadString('\n')
		conn.Close()
		lines <- strings.TrimSpace(line)
	}
}

func podappDeployment(image, dial string) *appsv1.Deployment {
	labels := map[string]string{"app": "podapp"}
	zero, one := intstr.FromInt32(0), intstr.FromInt32(1)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "podapp", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas:                new(int32(1)),
			ProgressDeadlineSeconds: new(int32(15)),
			Selector:                &metav1.LabelSelector{MatchLabels: labels},
			Strategy: appsv1.DeploymentStrategy{
				Type:          appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &zero, MaxSurge: &one},
			},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: new(int64(1)),
					Containers: []corev1.Container{{
						Name:  "podapp",
						Image: image,
						Env:   []corev1.EnvVar{{Name: "DIAL", Value: dial}},
						ReadinessProbe: &corev1.Probe{
							ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(8080)}},
							PeriodSeconds: 1,
						},
					}},
				},
			},
		},
	}
}

func setImage(ctx context.Context, t *testing.T, cs kubernetes.Interface, image string) {
	t.Helper()
	d, err := cs.AppsV1().Deployments("default").Get(ctx, "podapp", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Spec.Template.Spec.Containers[0].Image = image
	if _, err := cs.AppsV1().Deployments("default").Update(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitRolledOut waits until the deployment's one pod is a ready one of
// image, and no other pod is left; it returns that pod.
func waitRolledOut(ctx context.Context, t *testing.T, cs kubernetes.Interface, image string) *corev1.Pod {
	t.Helper()
	var last string
	for {
		d, err := cs.AppsV1().Deployments("default").Get(ctx, "podapp", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pods := podappPods(ctx, t, cs)
		st := d.Status
		if st.ObservedGeneration >= d.Generation && st.UpdatedReplicas == 1 && st.Replicas == 1 && st.AvailableReplicas == 1 &&
			len(pods) == 1 && pods[0].Spec.Containers[0].Image == image && podReady(&pods[0]) {
			return &pods[0]
		}
		last = fmt.Sprintf("status %+v, %s", st, describePods(pods))
		if !sleep(ctx) {
			t.Fatalf("deployment not rolled out to %s: %s", image, last)
		}
	}
}

// waitStalled waits for the deployment's Progressing condition to say the
// progress deadline passed.
func waitStalled(ctx context.Context, t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	for {
		d, err := cs.AppsV1().Deployments("default").Get(ctx, "podapp", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range d.Status.Conditions {
			if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" {
				return
			}
		}
		if !sleep(ctx) {
			t.Fatalf("the rollout to a never-ready version did not stall: %+v", d.Status)
		}
	}
}

// waitLog waits for line in pod's log, read through the API server (which
// asks the kubelet).
func waitLog(ctx context.Context, t *testing.T, cs kubernetes.Interface, pod *corev1.Pod, line string) {
	t.Helper()
	var last string
	for {
		b, err := cs.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
		if err == nil && strings.Contains(string(b), line+"\n") {
			return
		}
		last = fmt.Sprintf("%q %v", b, err)
		if !sleep(ctx) {
			t.Fatalf("pod %s's log lacks %q: %s", pod.Name, line, last)
		}
	}
}

func podappPods(ctx context.Context, t *testing.T, cs kubernetes.Interface) []corev1.Pod {
	t.Helper()
	list, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=podapp"})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func describePods(pods []corev1.Pod) string {
	var s []string
	for _, p := range pods {
		s = append(s, fmt.Sprintf("%s %s %s on %q ready=%v %+v %+v", p.Name, p.Spec.Containers[0].Image, p.Status.Phase, p.Spec.NodeName, podReady(&p), p.Status.Conditions, p.Status.ContainerStatuses))
	}
	return "pods: " + strings.Join(s, "; ")
}

// sleep waits a little; false when ctx ended.
func sleep(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(500 * time.Millisecond):
		return true
	}
}

// stopAndCheckCleanup stops c and checks that nothing of its node is left:
// no process naming its directory (containerd's shims name its socket), no
// mount under it, no bridge, no directory.
func stopAndCheckCleanup(t *testing.T, c *localcluster.Cluster) {
	t.Helper()
	dir := c.Dir()
	if err := c.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), dir) {
			t.Errorf("process %s still runs after Stop: %q", filepath.Dir(p), b)
		}
	}
	if b, err := os.ReadFile("/proc/self/mountinfo"); err != nil || strings.Contains(string(b), dir) {
		t.Errorf("mounts under %s after Stop (%v):\n%s", dir, err, b)
	}
	if _, err := net.InterfaceByName(localcluster.DefaultBridge); err == nil {
		t.Errorf("the bridge %s is still there after Stop", localcluster.DefaultBridge)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the cluster's directory after Stop: %v", err)
	}
}

func TestCheckNodeNamesWhatIsMissing(t *testing.T) {
	empty := t.TempDir()
	err := localcluster.CheckNode(empty)
	if !errors.Is(err, localcluster.ErrNodeUnsupported) {
		t.Fatalf("CheckNode of an empty assets directory: %v; want ErrNodeUnsupported", err)
	}
	for _, want := range append([]string{empty, "scripts/tools.sh node"}, localcluster.NodeBinaries...) {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("CheckNode error %q lacks %q", err, want)
		}
	}
	// Start refuses a node when the assets directory holds only etcd and
	// kube-apiserver.
	assets := localclustertest.Assets(t)
	partial := t.TempDir()
	for _, b := range localcluster.Binaries {
		if err := os.Symlink(filepath.Join(assets, b), filepath.Join(partial, b)); err != nil {
			t.Fatal(err)
		}
	}
	c, err := localcluster.Start(localcluster.Options{BinaryAssetsDir: partial, Node: &localcluster.NodeOptions{}})
	if err == nil {
		_ = c.Stop()
	}
	if !errors.Is(err, localcluster.ErrNodeUnsupported) || !strings.Contains(err.Error(), "kubelet") {
		t.Errorf("Start with a node and no kubelet: %v; want ErrNodeUnsupported naming the kubelet", err)
	}
}

func TestNodeRefusesABridgeItDidNotMake(t *testing.T) {
	assets := localclustertest.Assets(t)
	if err := localcluster.CheckNode(assets); err != nil {
		t.Skip(err)
	}
	defer localclustertest.LockNodeHost(t)() // were the refusal broken, a whole node would start
	const bridge = "opst9"
	if out, err := exec.Command("ip", "link", "add", bridge, "type", "bridge").CombinedOutput(); err != nil {
		t.Fatalf("ip link add: %v: %s", err, out)
	}
	defer exec.Command("ip", "link", "del", bridge).Run()
	c, err := localcluster.Start(localcluster.Options{Node: &localcluster.NodeOptions{Bridge: bridge, Subnet: "10.244.9.0/24"}})
	if err == nil {
		_ = c.Stop()
		t.Fatal("a node started on a bridge that existed already")
	}
	if !strings.Contains(err.Error(), bridge+" exists already") {
		t.Errorf("start on an existing bridge: %v; want it named", err)
	}
	if _, err := net.InterfaceByName(bridge); err != nil {
		t.Errorf("the bridge the test made is gone after the failed start: %v", err)
	}
}
