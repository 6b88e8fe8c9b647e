package runner

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/localcluster/localclustertest"
	"github.com/outpost-dev/outpost/protocol"
)

func TestImageForVersion(t *testing.T) {
	for in, want := range map[string]string{
		"ghcr.io/outpost-dev/outpost-runner:v1.2.3":          "ghcr.io/outpost-dev/outpost-runner:2.0.0",
		"registry:5000/outpost/runner":                       "registry:5000/outpost/runner:2.0.0",
		"registry:5000/outpost/runner:1.0@sha256:0123456789": "registry:5000/outpost/runner:2.0.0",
		"runner@sha256:0123456789":                           "runner:2.0.0",
	} {
		if got := imageForVersion(in, "2.0.0"); got != want {
			t.Errorf("imageForVersion(%q) = %q, want %q", in, got, want)
		}
	}
}

// In helm mode a runner_update job rolls the runner's own Deployment to the
// new version's image. The cluster here (kube-apiserver and etcd, no
// kubelet) never starts the new pod, so the rollout never becomes healthy:
// at the deadline the runner, which kept running, puts the previous image
// back, reports the rollback and claims jobs again.
func TestHelmModeUpdateRollsTheDeploymentBackWhenNotHealthy(t *testing.T) {
	cluster := localclustertest.Start(t)
	t.Setenv("KUBECONFIG", cluster.KubeconfigPath())
	cs := kubernetes.NewForConfigOrDie(cluster.RESTConfig())
	ctx := context.Background()
	const ns, old = "runner-ns", "registry.example:5000/outpost/runner:1.0.0"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "outpost-runner"}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "outpost-runner"}, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "runner", Image: old}}}}}}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	image := func() string {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "outpost-runner", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return d.Spec.Template.Spec.Containers[0].Image
	}

	helmBin := filepath.Join(testutil.Build(t, "../cmd/outpost-runner-helm"), HelmJobBinary)
	g := newTestGateway(t)
	stop, _, _ := startRunner(t, g, Config{Token: g.runnerToken, Deployment: ns + "/outpost-runner", Helm: HelmOptions{JobBinary: helmBin}})
	defer stop()

	const deadline = 4 * time.Second
	m, _ := json.Marshal(protocol.RunnerUpdateManifest{UpdateID: "rup_1", Version: "2.0.0",
		Binary:       protocol.ArtifactRef{Repository: "outpost/runner", Digest: "sha256:" + strings.Repeat("a", 64)},
		BinaryDigest: "sha256:" + strings.Repeat("b", 64), HealthDeadlineMS: deadline.Milliseconds()})
	done := runOneJob(g, protocol.Job{ID: "job_update", Type: protocol.JobTypeRunnerUpdate, Attempt: 1, Manifest: m})
	if done.Status != protocol.StatusSucceeded {
		t.Fatalf("runner_update job: %+v", done)
	}
	staged := time.Now()
	waitUntil(t, "the Deployment rolling to the new image", 10*time.Second, func() bool { return image() == "registry.example:5000/outpost/runner:2.0.0" })
	// During the rollout the runner claims nothing and leaves the new image.
	claims := g.claimCount()
	time.Sleep(time.Until(staged.Add(deadline - time.Second)))
	if n, img := g.claimCount(), image(); n != claims || img == old {
		t.Errorf("before the deadline: %d claims during the rollout (want none), image %s", n-claims, img)
	}
	waitUntil(t, "the previous image back on the Deployment", 15*time.Second, func() bool { return image() == old })
	var u protocol.RunnerUpdateReport
	g.waitFor("the rollback's report", func() bool {
		if len(g.updates) > 0 {
			u = g.updates[0]
		}
		return len(g.updates) > 0
	})
	if u.UpdateID != "rup_1" || u.Status != protocol.UpdateRolledBack ||
		!strings.Contains(u.Reason, "did not become ready within 4s") || !strings.Contains(u.Reason, "back on "+old) {
		t.Errorf("report %+v", u)
	}
	if c := runOneJob(g, noopJob("job_after", nil)); c.Status != protocol.StatusSucceeded {
		t.Errorf("a job after the rollback: %+v", c)
	}
}

// waitUntil polls cond until it holds, failing the test after limit.
func waitUntil(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(limit); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
