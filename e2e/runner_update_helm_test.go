package e2e

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/localcluster/localclustertest"
	"github.com/outpost-dev/outpost/runnerrelease"
)

// Helm mode through the control plane: a real runner process (v1) that
// believes it is the Deployment "outpost-runner" of a local cluster
// (--deployment, KUBECONFIG; run outside it) is updated to v2 through the
// API; it rolls the Deployment to the image digest v2's signed release
// names. The cluster has no kubelet, so the new pod never becomes ready: the
// runner puts the previous image back within the deadline, the update is
// failed with its reason, and jobs run on v1 again. (The good case, on a
// cluster that runs pods: runner_update_node_test.go.)
func TestRunnerSelfUpdateHelmModeRollsBack(t *testing.T) {
	dir := t.TempDir()
	v1 := buildRunnerVersion(t, dir, "v1")
	v2 := buildRunnerVersion(t, dir, "v2")
	s := newStack(t, stackOptions{})
	ctx := context.Background()
	s.giveInstallRegistry(ctx)
	const digest = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
	if _, err := runnerrelease.Publish(ctx, s.store, runnerrelease.Registry{Address: s.registry.Addr(), PlainHTTP: true},
		runnerrelease.Release{Version: "v2", Binary: v2, ImageDigest: digest, Key: testReleaseKey}); err != nil {
		t.Fatalf("publish v2: %v", err)
	}

	cluster := localclustertest.Start(t)
	deployments := kubernetes.NewForConfigOrDie(cluster.RESTConfig()).AppsV1().Deployments("default")
	const image = "registry.example/outpost-runner:v1"
	sel := map[string]string{"app": "outpost-runner"}
	if _, err := deployments.Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "outpost-runner"},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: sel},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "runner", Image: image}}}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	imageNow := func() string {
		d, err := deployments.Get(ctx, "outpost-runner", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return d.Spec.Template.Spec.Containers[0].Image
	}

	cmd := exec.Command(v1, "run", "--gateway-url", s.gateway, "--work-dir", t.TempDir(), "--deployment", "default/outpost-runner")
	cmd.Env = []string{runnerPath(), "OUTPOST_TOKEN=" + s.runTok, "KUBECONFIG=" + cluster.KubeconfigPath(), "OUTPOST_AUTO_UPDATE=true"}
	startProcess(t, cmd)
	s.waitRunnerVersion("v1")

	start := time.Now()
	u := s.startRunnerUpdate("v2", 10)
	// To the image the signed release names, pinned by digest (not the tag).
	waitFor(t, time.Minute, "the Deployment rolling to v2", func() bool { return imageNow() == "registry.example/outpost-runner@"+digest })
	u = s.waitRunnerUpdate(u.ID, 2*time.Minute)
	want := "did not become ready within 10s; the Deployment is back on " + image
	if u.Status != string(status.RunnerUpdateFailed) || !strings.Contains(u.Reason, want) {
		t.Fatalf("update to v2: %s %q, want failed with %q", u.Status, u.Reason, want)
	}
	t.Logf("update failed after %s: %s", time.Since(start).Round(100*time.Millisecond), u.Reason)
	if img := imageNow(); img != image {
		t.Errorf("the Deployment's image is %s, want %s back", img, image)
	}
	if v := s.waitJobVersion(s.enqueueNoop(t, "after-helm-rollback", 0)); v != "v1" {
		t.Errorf("a job after the rollback ran on %q, want v1", v)
	}
}
