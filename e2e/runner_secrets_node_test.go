package e2e

import (
	"context"
	"net"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/outpost-dev/outpost/charts"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/localcluster"
	"github.com/outpost-dev/outpost/localcluster/localclustertest"
)

// The runner chart's pod on a real node, with the chart's defaults: the
// runner runs as root with six capabilities, its jobs as uids of their own
// (runner.jobUser). It registers with a one-time token and keeps the runner
// token in its token file. A job that reads the runner's
// /proc/<pid>/environ, the token file and the pod's service-account token
// (0600 root's; 0400 beside a sidecar of another uid), and lists and writes
// the work and state directories, gets nothing; /tmp is sticky; a job
// that hangs past its timeout is stopped (the runner may signal other uids).
func TestChartJobsCannotReadTheRunnersToken(t *testing.T) {
	cluster := localclustertest.StartWithNode(t, localcluster.NodeOptions{Bridge: "opst32", Subnet: "10.244.32.0/24"})
	node := cluster.Node()
	s := newStack(t, stackOptions{})
	ctx := context.Background()
	dir := t.TempDir()
	img, err := localcluster.BinariesImage([]string{buildStatic(t, dir, "../cmd/outpost-runner", ""), buildStatic(t, dir, "./testdata/secretprobe", "")})
	if err != nil {
		t.Fatal(err)
	}
	const repo, tag = "outpost.local/outpost-runner", "secrets"
	tarball := filepath.Join(dir, "runner.tar")
	if err := localcluster.WriteImageTarball(tarball, repo+":"+tag, img); err != nil {
		t.Fatal(err)
	}
	if err := node.LoadImage(ctx, tarball); err != nil {
		t.Fatal(err)
	}
	regTok, err := s.store.RotateRegistrationToken(ctx, s.orgID, s.runnerID)
	if err != nil {
		t.Fatal(err)
	}
	gu, err := url.Parse(s.gateway)
	if err != nil {
		t.Fatal(err)
	}
	gw := newFaultProxyOn(t, net.JoinHostPort(node.Gateway().String(), "0"), gu.Host).addr // pods reach the host on the bridge

	const ns, work = "outpost", "/var/lib/outpost-runner"
	cs := kubernetes.NewForConfigOrDie(cluster.RESTConfig())
	t.Cleanup(func() { logPodsIfFailed(t, cs, ns) })
	installRunnerChart(t, cluster, ns, map[string]any{
		"gateway":   map[string]any{"url": "http://" + gw},
		"token":     map[string]any{"value": regTok},
		"image":     map[string]any{"repository": repo, "tag": tag, "pullPolicy": "Never"},
		"policy":    map[string]any{"allowDebugCommands": true},
		"resources": map[string]any{"requests": map[string]any{"cpu": "10m", "memory": "32Mi"}},
	})
	waitFor(t, 3*time.Minute, "the runner pod registering with the one-time token", func() bool {
		r, err := s.store.GetRunner(ctx, s.orgID, s.runnerID)
		return err == nil && r.RegisteredAt != nil
	})

	const saToken = "/var/run/secrets/kubernetes.io/serviceaccount/token"
	out := s.runJobArgs(t, "probe", "/secretprobe", "read:/proc/self/environ", "read:"+work+"/runner-token", "read:"+saToken, "stat:"+saToken, "stat:/tmp",
		"list:"+work, "write:"+work, "list:"+work+"/state", "write:"+work+"/state", "list:"+work+"/jobs")
	t.Logf("the job's output:\n%s", masked(out))
	pid := regexp.MustCompile(`RUNNER pid (\d+)`).FindStringSubmatch(out)
	if pid == nil {
		t.Fatalf("the job found no `outpost-runner run` process:\n%s", masked(out))
	}
	for _, want := range []string{"DENIED read /proc/" + pid[1] + "/environ (exists)", "DENIED read " + work + "/runner-token (exists)",
		"DENIED read " + saToken + " (exists)", "MODE " + saToken + " -rw------- uid 0", "MODE /tmp dtrwxrwxrwx", "DENIED list " + work + " (exists)", "DENIED write " + work + " (exists)",
		"DENIED list " + work + "/state (exists)", "DENIED write " + work + "/state (exists)", "DENIED list " + work + "/jobs (exists)",
		"READ /proc/self/environ", "OUTPOST_JOB_ID="} {
		if !strings.Contains(out, want) {
			t.Errorf("the job's output lacks %q:\n%s", want, masked(out))
		}
	}
	if uid := regexp.MustCompile(`uid (\d+) gid`).FindStringSubmatch(out); uid == nil || !inJobUsers(uid[1]) {
		t.Errorf("the job ran as uid %v, not one of the chart's 10000-10999", uid)
	}
	for _, secret := range []string{"oprn_", regTok, "OUTPOST_TOKEN", "eyJ"} { // eyJ: a JWT, the service-account token
		if strings.Contains(out, secret) {
			t.Errorf("the job's output holds %q:\n%s", secret, masked(out))
		}
	}

	if side := sidecarPodJob(t, cs, ns, saToken); !strings.Contains(side, "DENIED read "+saToken+" (exists)") ||
		!strings.Contains(side, "MODE "+saToken+" -r-------- uid 0") {
		t.Error("with a sidecar of another uid in the pod, the service-account token is not root's alone (0400)")
	}

	// Stopping a job of another uid takes the KILL capability.
	hung := s.enqueueCommandWithin(t, "hang", []string{"/secretprobe", "hang"}, 5*time.Second)
	if j := s.waitJob(hung); j.Status != status.JobFailed {
		t.Errorf("the job that hung past its timeout: %s, want failed", j.Status)
	}
	if log := s.jobLogText(hung); !strings.Contains(log, "timed out after 5s, sending SIGTERM") || strings.Contains(log, "after SIGTERM, sending SIGKILL") {
		t.Errorf("the hung job was not stopped by its SIGTERM:\n%s", log)
	}
}

func inJobUsers(uid string) bool {
	n, err := strconv.Atoi(uid)
	return err == nil && n >= 10000 && n <= 10999
}

// logPodsIfFailed logs the namespace's pods (status and logs) when the test failed.
func logPodsIfFailed(t *testing.T, cs kubernetes.Interface, ns string) {
	if !t.Failed() {
		return
	}
	ctx := context.Background()
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Logf("pods: %v", err)
		return
	}
	for _, p := range pods.Items {
		t.Logf("pod %s: %s %+v", p.Name, p.Status.Phase, p.Status.ContainerStatuses)
		log, err := cs.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
		t.Logf("its log (%v):\n%s", err, log)
	}
}

// sidecarPodJob runs the chart's pod spec with a sidecar of its own uid (as
// Istio injects, 1337), so that the kubelet no longer writes the
// service-account token 0600 for one runAsUser but with the volume's
// default mode; in the runner's container a job's uid (10500) reads it and
// stats it. It returns what that job printed.
func sidecarPodJob(t *testing.T, cs kubernetes.Interface, ns, saToken string) string {
	ctx := context.Background()
	d, err := cs.AppsV1().Deployments(ns).Get(ctx, charts.DefaultRunnerRelease, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec := d.Spec.Template.Spec.DeepCopy()
	runner := spec.Containers[0]
	job, sidecar := runner, runner
	uid := func(n int64) *corev1.SecurityContext {
		return &corev1.SecurityContext{RunAsUser: &n, AllowPrivilegeEscalation: new(bool), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
	}
	job.Name, job.Command, job.Args, job.SecurityContext = "job", []string{"/secretprobe"}, []string{"read:" + saToken, "stat:" + saToken}, uid(10500)
	sidecar.Name, sidecar.Command, sidecar.Args, sidecar.SecurityContext = "sidecar", []string{"/secretprobe"}, []string{"hang"}, uid(1337)
	for _, c := range []*corev1.Container{&job, &sidecar} {
		c.Env, c.Ports, c.LivenessProbe, c.ReadinessProbe = nil, nil, nil, nil
	}
	spec.Containers, spec.RestartPolicy = []corev1.Container{job, sidecar}, corev1.RestartPolicyNever
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "sidecar-probe", Namespace: ns}, Spec: *spec}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Minute, "the job beside a sidecar ending", func() bool {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		return err == nil && len(p.Status.ContainerStatuses) == 2 && slices.ContainsFunc(p.Status.ContainerStatuses, func(s corev1.ContainerStatus) bool {
			return s.Name == "job" && s.State.Terminated != nil
		})
	})
	out, err := cs.CoreV1().Pods(ns).GetLogs(pod.Name, &corev1.PodLogOptions{Container: "job"}).DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the job beside a sidecar:\n%s", masked(string(out)))
	_ = cs.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
	return string(out)
}

// tokenLike matches a runner token or a JWT (a service-account token).
var tokenLike = regexp.MustCompile(`oprn_[A-Za-z0-9_-]+|eyJ[A-Za-z0-9_.-]+`)

// masked is a probe's output fit for the test log: were the protection
// broken, the tokens it read are not printed.
func masked(out string) string { return tokenLike.ReplaceAllString(out, "<token>") }
