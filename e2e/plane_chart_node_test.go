package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"helm.sh/helm/v3/pkg/chart"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/outpost-dev/outpost/charts/chartstest"
	"github.com/outpost-dev/outpost/localcluster"
	"github.com/outpost-dev/outpost/localcluster/localclustertest"
	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/seal"
	"github.com/outpost-dev/outpost/store/storetest"
)

// The release of the control plane's chart in the chart tests, and its
// namespace.
const planeRelease, planeNS = "outpost", "outpost"

// Versions of the control plane's image in the chart tests: v1 and v2 are
// the same code (v2 a new build, as a patch release is); v3 carries one more
// migration (testdata/upgrade-migration).
const (
	planeV1, planeV2, planeV3 = "v1", "v2", "v3"
)

// chartPlane is the control plane installed with charts/outpost on a local
// cluster with a node: its images pulled from a registry on loopback, on
// PostgreSQL (a fresh database) and an `outpost temporal` process on the
// host, which the pods reach on the node's bridge. The host reaches its
// Services through service proxies (localcluster.ProxyService), as users and
// runners would through a load balancer: apiURL, gatewayURL, registryURL.
type chartPlane struct {
	t       testing.TB
	cluster *localcluster.Cluster
	cs      kubernetes.Interface
	helm    *chartstest.Helm
	chart   *chart.Chart
	images  string // the registry the node pulls the images from
	// The Services as the host reaches them.
	apiURL, gatewayURL, registryURL string
	temporal                        string // the Temporal frontend the pods dial
	token                           string // the org's admin API token
	store                           *store.Store
	// imageRef is the pods' image of a version.
	imageRef func(v string) string
}

// startChartPlane starts the cluster, PostgreSQL's database, Temporal and the
// proxies, installs the chart on image v1, and creates an org. It skips
// without what a node needs.
func startChartPlane(t testing.TB) *chartPlane { return startChartPlaneWith(t, "") }

// startChartPlaneWith is startChartPlane; with builtImage, an image of the
// local Docker engine (scripts/docker.sh's) loaded into the node instead of
// v1's.
func startChartPlaneWith(t testing.TB, builtImage string) *chartPlane {
	t.Helper()
	// The binary first: its build takes minutes, and the node holds the
	// host's node lock other packages' node tests wait on.
	began := time.Now()
	host := planeBinary(t, planeV1) // runs `outpost temporal`, `org create` on the host
	cluster := localclustertest.StartWithNode(t, localcluster.NodeOptions{})
	node := cluster.Node()
	ctx := context.Background()
	p := &chartPlane{t: t, cluster: cluster, cs: kubernetes.NewForConfigOrDie(cluster.RESTConfig())}
	images, err := registry.Start(ctx, registry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { images.Close() })
	p.images = images.Addr()
	if err := node.TrustHTTPRegistry(p.images); err != nil {
		t.Fatal(err)
	}
	p.imageRef = func(v string) string { return p.images + "/outpost:" + v }
	if builtImage != "" {
		p.loadDockerImage(builtImage)
		p.imageRef = func(string) string { return builtImage }
	} else {
		p.pushImage(planeV1)
	}
	t.Logf("the image built and loaded in %s", time.Since(began).Round(time.Second))
	if p.chart, err = chartstest.ControlPlaneChart(); err != nil {
		t.Fatal(err)
	}
	if p.helm, err = chartstest.New(cluster.KubeconfigPath(), planeNS); err != nil {
		t.Fatal(err)
	}

	bridge := node.Gateway().String()
	db := storetest.NewPostgresDatabase(t)
	p.temporal = startTemporalOn(t, host, bridge)
	kekFile := filepath.Join(t.TempDir(), "kek")
	kek, _, err := seal.LoadOrCreateLocalKey(kekFile)
	if err != nil {
		t.Fatal(err)
	}
	p.prepareNamespace(podDatabaseURL(t, db, bridge), kekFile)
	for _, svc := range []struct {
		name, port string
		url        *string
	}{{"api", "http", &p.apiURL}, {"gateway", "gateway", &p.gatewayURL}, {"registry", "registry", &p.registryURL}} {
		sp, err := cluster.ProxyService(planeNS, planeRelease+"-"+svc.name, svc.port, "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		*svc.url = "http://" + sp.Addr() // closed when the cluster stops
	}
	began = time.Now()
	if _, err := p.helm.Install(planeRelease, p.chart, p.values(planeV1), 5*time.Minute); err != nil {
		t.Fatalf("helm install: %v\n%s", err, p.describe())
	}
	p.waitRolledOut(planeV1)
	t.Logf("helm install: every pod ready in %s", time.Since(began).Round(time.Second))
	p.token = strings.TrimSpace(runOutpost(t, host, "org", "create", "-database-url", db, "-kek-file", kekFile, "acme"))
	octx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if p.store, err = store.Open(octx, store.Config{DatabaseURL: db, Keys: &seal.Keyring{Current: kek}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.store.Close() })
	return p
}

// values are the chart's values for image version v.
func (p *chartPlane) values(v string) map[string]any {
	small := map[string]any{"requests": map[string]any{"cpu": "20m", "memory": "64Mi"}, "limits": map[string]any{"memory": "1Gi"}}
	ref := p.imageRef(v)
	i := strings.LastIndex(ref, ":")
	return map[string]any{
		"image":    map[string]any{"repository": ref[:i], "tag": ref[i+1:]},
		"database": map[string]any{"existingSecret": "outpost-database"},
		"kek":      map[string]any{"existingSecret": "outpost-kek"},
		"temporal": map[string]any{"address": p.temporal},
		"gateway":  map[string]any{"url": p.gatewayURL},
		"registry": map[string]any{"url": p.registryURL,
			"persistence": map[string]any{"storageClass": "outpost-test", "size": "1Gi"}},
		"api":     map[string]any{"resources": small},
		"worker":  map[string]any{"resources": small},
		"migrate": map[string]any{"resources": small},
	}
}

// prepareNamespace makes what the chart takes by name: the namespace, the
// Secrets of the database URL and of the key, and the volume the registry's
// claim binds to (a directory of the host's: one node, so every api pod
// mounts the same, as ReadWriteMany).
func (p *chartPlane) prepareNamespace(dbURL, kekFile string) {
	p.t.Helper()
	ctx := context.Background()
	kek, err := os.ReadFile(kekFile)
	if err != nil {
		p.t.Fatal(err)
	}
	blobs := p.t.TempDir()
	if err := os.Chown(blobs, 65532, 65532); err != nil {
		p.t.Fatal(err)
	}
	objects := []func() error{
		func() error {
			_, err := p.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: planeNS}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := p.cs.CoreV1().Secrets(planeNS).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "outpost-database"},
				Data: map[string][]byte{"url": []byte(dbURL)}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := p.cs.CoreV1().Secrets(planeNS).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "outpost-kek"},
				Data: map[string][]byte{"kek": kek}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := p.cs.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{
				ObjectMeta: metav1.ObjectMeta{Name: "outpost-registry-blobs"},
				Spec: corev1.PersistentVolumeSpec{
					StorageClassName:       "outpost-test",
					AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
					Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
					PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: blobs}},
				},
			}, metav1.CreateOptions{})
			return err
		},
	}
	for _, create := range objects {
		if err := create(); err != nil {
			p.t.Fatal(err)
		}
	}
}

// podDatabaseURL is the database's URL as the pods reach it: through a
// proxy on the bridge to the host's PostgreSQL.
func podDatabaseURL(t testing.TB, db, bridge string) string {
	t.Helper()
	u, err := url.Parse(db)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = newFaultProxyOn(t, net.JoinHostPort(bridge, "0"), u.Host).addr
	return u.String()
}

// startTemporalOn runs `outpost temporal` on the bridge's address, which
// the pods reach, and returns its frontend's address.
func startTemporalOn(t testing.TB, bin, ip string) string {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	tp := startProcess(t, exec.Command(bin, "temporal", "-data-dir", t.TempDir(), "-temporal-ip", ip, "-temporal-port", port, "-temporal-ui-port", "-1"))
	waitOutput(t, tp, "temporal ready")
	return addr
}

// planeBinaries are the control plane's static binaries by version, built
// once per test binary.
var planeBinaries struct {
	sync.Mutex
	paths map[string]string
}

// planeBinary builds `outpost` as a static binary of version v (v3 with the
// extra migration, put into package migrations with -overlay).
func planeBinary(t testing.TB, v string) string {
	t.Helper()
	planeBinaries.Lock()
	defer planeBinaries.Unlock()
	if bin, ok := planeBinaries.paths[v]; ok {
		return bin
	}
	dir := filepath.Join(binDir, "plane-"+v)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "outpost")
	args := []string{"build", "-o", bin, "-ldflags", "-s -w -X main.version=" + v} // stripped, as the image's
	if v == planeV3 {
		args = append(args, "-overlay", migrationOverlay(t, dir))
	}
	build := exec.Command("go", append(args, "../cmd/outpost")...)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build outpost %s: %v\n%s", v, err, out)
	}
	if planeBinaries.paths == nil {
		planeBinaries.paths = map[string]string{}
	}
	planeBinaries.paths[v] = bin
	return bin
}

// migrationOverlay writes the -overlay file that adds
// testdata/upgrade-migration/extra_migration.go to package migrations.
func migrationOverlay(t testing.TB, dir string) string {
	t.Helper()
	src, err := filepath.Abs("testdata/upgrade-migration/extra_migration.go")
	if err != nil {
		t.Fatal(err)
	}
	target, err := filepath.Abs("../store/migrations/zz_upgrade_test_migration.go")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"Replace": map[string]string{target: src}})
	path := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// pushImage pushes the image of version v: the static outpost binary alone,
// its entrypoint (the chart gives the command).
func (p *chartPlane) pushImage(v string) {
	p.t.Helper()
	img, err := localcluster.BinaryImage(planeBinary(p.t, v))
	if err != nil {
		p.t.Fatal(err)
	}
	ref, err := name.ParseReference(p.images+"/outpost:"+v, name.Insecure)
	if err != nil {
		p.t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		p.t.Fatalf("push %s: %v", ref, err)
	}
}

// loadDockerImage loads ref from the local Docker engine into the node.
func (p *chartPlane) loadDockerImage(ref string) {
	p.t.Helper()
	tarball := filepath.Join(p.t.TempDir(), "image.tar")
	if out, err := exec.Command("docker", "save", "-o", tarball, ref).CombinedOutput(); err != nil {
		p.t.Fatalf("docker save %s: %v\n%s", ref, err, out)
	}
	if err := p.cluster.Node().LoadImage(context.Background(), tarball); err != nil {
		p.t.Fatal(err)
	}
}

// pods are the api and worker pods, by name.
func (p *chartPlane) pods() map[string]corev1.Pod {
	p.t.Helper()
	list, err := p.cs.CoreV1().Pods(planeNS).List(context.Background(), metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/instance=" + planeRelease + ",app.kubernetes.io/component in (api,worker)"})
	if err != nil {
		p.t.Fatal(err)
	}
	pods := map[string]corev1.Pod{}
	for _, pod := range list.Items {
		pods[pod.Name] = pod
	}
	return pods
}

// rolledOut reports whether the pods are two api and two worker pods, all
// ready on version v's image, none other left (a terminating one included).
func (p *chartPlane) rolledOut(v string) (bool, string) {
	pods := p.pods()
	count := map[string]int{}
	var desc []string
	ok := true
	for _, pod := range pods {
		c := pod.Labels["app.kubernetes.io/component"]
		count[c]++
		good := pod.Spec.Containers[0].Image == p.imageRef(v) && podReady(pod) && pod.DeletionTimestamp == nil
		ok = ok && good
		desc = append(desc, fmt.Sprintf("%s %s ready=%v deleting=%v", pod.Name, pod.Spec.Containers[0].Image, podReady(pod), pod.DeletionTimestamp != nil))
	}
	slices.Sort(desc)
	return ok && count["api"] == 2 && count["worker"] == 2, strings.Join(desc, "; ")
}

// waitRolledOut waits until every api and worker pod is a ready one of
// version v.
func (p *chartPlane) waitRolledOut(v string) {
	p.t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		ok, desc := p.rolledOut(v)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the pods are not all ready on %s after 5 minutes: %s\n%s", v, desc, p.describe())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// describe says what became of the release's pods (the hook's included):
// their status and the end of their containers' logs.
func (p *chartPlane) describe() string {
	ctx := context.Background()
	list, err := p.cs.CoreV1().Pods(planeNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, pod := range list.Items {
		fmt.Fprintf(&b, "pod %s: %s %+v\n", pod.Name, pod.Status.Phase, pod.Status.ContainerStatuses)
		tail := int64(20)
		logs, err := p.cs.CoreV1().Pods(planeNS).GetLogs(pod.Name, &corev1.PodLogOptions{TailLines: &tail}).DoRaw(ctx)
		fmt.Fprintf(&b, "  its log (%v):\n%s\n", err, logs)
	}
	return b.String()
}

// replicas is the chart's control plane as the replicas tests see one:
// its API (through its Service), its gateway as runners reach it, an org.
func (p *chartPlane) replicas() *replicas {
	return &replicas{apis: []string{p.apiURL}, token: p.token, runnerGateway: p.gatewayURL, store: p.store}
}
