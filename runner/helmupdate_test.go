package runner

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/memory"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/localcluster/localclustertest"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/registry"
)

func TestImageByDigest(t *testing.T) {
	const d = "sha256:2222"
	for in, want := range map[string]string{
		"ghcr.io/outpost-dev/outpost-runner:v1.2.3":          "ghcr.io/outpost-dev/outpost-runner@" + d,
		"registry:5000/outpost/runner":                       "registry:5000/outpost/runner@" + d,
		"registry:5000/outpost/runner:1.0@sha256:0123456789": "registry:5000/outpost/runner@" + d,
		"runner@sha256:0123456789":                           "runner@" + d,
	} {
		if got := imageByDigest(in, d); got != want {
			t.Errorf("imageByDigest(%q) = %q, want %q", in, got, want)
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
	pub, key, _ := ed25519.GenerateKey(nil)
	stop, _, _ := startRunner(t, g, Config{Token: g.runnerToken, Deployment: ns + "/outpost-runner", Helm: HelmOptions{JobBinary: helmBin},
		AutoUpdate: true, ReleaseKeys: base64.StdEncoding.EncodeToString(pub)})
	defer stop()

	// The release, signed, in the install's registry: the job reads it.
	reg, err := registry.Start(ctx, registry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	const imageDigest = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
	bin := []byte("runner 2.0.0")
	rel := signRelease(protocol.RunnerRelease{Version: "2.0.0", BinaryDigest: digest.FromBytes(bin).String(), ImageDigest: imageDigest}, key)
	ref := pushRelease(t, reg.Addr(), rel, bin)
	const deadline = 4 * time.Second
	m, _ := json.Marshal(protocol.RunnerUpdateManifest{UpdateID: "rup_1", Version: "2.0.0", Binary: ref,
		BinaryDigest: rel.BinaryDigest, HealthDeadlineMS: deadline.Milliseconds()})
	done := runOneJob(g, protocol.Job{ID: "job_update", Type: protocol.JobTypeRunnerUpdate, Attempt: 1, Manifest: m})
	if done.Status != protocol.StatusSucceeded {
		t.Fatalf("runner_update job: %+v", done)
	}
	staged := time.Now()
	waitUntil(t, "the Deployment rolling to the new image", 10*time.Second, func() bool { return image() == "registry.example:5000/outpost/runner@"+imageDigest })
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

// pushRelease pushes a runner artifact holding bin, rel in its
// annotations, as runnerrelease.Publish does, and returns its reference.
func pushRelease(t *testing.T, addr string, rel protocol.RunnerRelease, bin []byte) protocol.ArtifactRef {
	t.Helper()
	ctx := t.Context()
	mem := memory.New()
	layer := content.NewDescriptorFromBytes(protocol.MediaTypeRunnerBinary, bin)
	if err := mem.Push(ctx, layer, bytes.NewReader(bin)); err != nil {
		t.Fatal(err)
	}
	m, err := oras.PackManifest(ctx, mem, oras.PackManifestVersion1_1, protocol.ArtifactTypeRunner, oras.PackManifestOptions{
		Layers: []ocispec.Descriptor{layer}, ManifestAnnotations: map[string]string{protocol.AnnotationRunnerVersion: rel.Version,
			protocol.AnnotationRunnerImageDigest: rel.ImageDigest, protocol.AnnotationRunnerSignature: rel.Signature}})
	if err != nil {
		t.Fatal(err)
	}
	repo, err := remote.NewRepository(addr + "/outpost/runner")
	if err != nil {
		t.Fatal(err)
	}
	repo.PlainHTTP = true
	if err := oras.CopyGraph(ctx, mem, repo, m, oras.DefaultCopyGraphOptions); err != nil {
		t.Fatal(err)
	}
	return protocol.ArtifactRef{Registry: protocol.RegistryAccess{Address: addr, PlainHTTP: true}, Repository: "outpost/runner", Digest: m.Digest.String()}
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
