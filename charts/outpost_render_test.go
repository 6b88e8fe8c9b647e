package charts_test

import (
	"io/fs"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/outpost-dev/outpost/charts"
)

// What `helm template` makes of the values an install needs: two
// Deployments of the appVersion's image whose pods run as a user, on a
// read-only root with no capability and no service-account token, the
// database URL and the key only from the Secrets named; three Services on
// the api pods; a PodDisruptionBudget each; the migration as a hook Job; a
// ReadWriteMany claim for the registry's blobs; no Secret and no Ingress.
func TestTheControlPlaneChartRenders(t *testing.T) {
	objs := renderPlane(t, planeValues())
	var kinds []string
	for k := range objs {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	want := []string{"Deployment/outpost-api", "Deployment/outpost-worker", "Job/outpost-migrate",
		"PersistentVolumeClaim/outpost-registry", "PodDisruptionBudget/outpost-api", "PodDisruptionBudget/outpost-worker",
		"Service/outpost-api", "Service/outpost-gateway", "Service/outpost-registry"}
	if !slices.Equal(kinds, want) {
		t.Fatalf("objects %v, want %v", kinds, want)
	}
	api := objs["Deployment/outpost-api"].(*appsv1.Deployment)
	worker := objs["Deployment/outpost-worker"].(*appsv1.Deployment)
	job := objs["Job/outpost-migrate"].(*batchv1.Job)
	for name, spec := range map[string]corev1.PodSpec{"api": api.Spec.Template.Spec, "worker": worker.Spec.Template.Spec, "migrate": job.Spec.Template.Spec} {
		checkPod(t, name, spec)
	}
	for _, d := range []*appsv1.Deployment{api, worker} {
		checkRolling(t, d)
	}
	checkAPI(t, api)
	checkWorker(t, worker)
	if a := job.Annotations; a["helm.sh/hook"] != "pre-install,pre-upgrade" || job.Spec.Template.Spec.Containers[0].Args[0] != "migrate" {
		t.Errorf("migrate Job: annotations %v, args %v; want a pre-install,pre-upgrade hook running migrate", a, job.Spec.Template.Spec.Containers[0].Args)
	}
	for name, port := range map[string]string{"api": "http", "gateway": "gateway", "registry": "registry"} {
		svc := objs["Service/outpost-"+name].(*corev1.Service)
		if svc.Spec.Selector["app.kubernetes.io/component"] != "api" || svc.Spec.Ports[0].TargetPort.String() != port {
			t.Errorf("Service %s: selector %v, target port %s; want the api pods' %s port", name, svc.Spec.Selector, svc.Spec.Ports[0].TargetPort.String(), port)
		}
	}
	for _, name := range []string{"api", "worker"} {
		pdb := objs["PodDisruptionBudget/outpost-"+name].(*policyv1.PodDisruptionBudget)
		if pdb.Spec.MaxUnavailable.String() != "1" || pdb.Spec.Selector.MatchLabels["app.kubernetes.io/component"] != name {
			t.Errorf("PodDisruptionBudget %s: %+v", name, pdb.Spec)
		}
	}
	pvc := objs["PersistentVolumeClaim/outpost-registry"].(*corev1.PersistentVolumeClaim)
	if !slices.Equal(pvc.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}) || pvc.Annotations["helm.sh/resource-policy"] != "keep" {
		t.Errorf("registry claim: %+v %v; want ReadWriteMany, kept on uninstall", pvc.Spec.AccessModes, pvc.Annotations)
	}
}

// checkPod checks what every pod of the chart shares.
func checkPod(t *testing.T, name string, spec corev1.PodSpec) {
	t.Helper()
	c := spec.Containers[0]
	if c.Image != "ghcr.io/outpost-dev/outpost:"+appVersion(t) {
		t.Errorf("%s: image %s, want the appVersion's", name, c.Image)
	}
	psc, sc := spec.SecurityContext, c.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || *psc.RunAsUser != 65532 || sc == nil ||
		!*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("%s: pod security %+v, container security %+v; want non-root, read-only root, no capability", name, psc, sc)
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Errorf("%s: mounts a service-account token", name)
	}
	env := envOf(c)
	if ref := env["DATABASE_URL"].ValueFrom; env["DATABASE_URL"].Value != "" || ref == nil || ref.SecretKeyRef == nil ||
		ref.SecretKeyRef.Name != "outpost-database" || ref.SecretKeyRef.Key != "url" {
		t.Errorf("%s: DATABASE_URL %+v, want it from Secret outpost-database, key url", name, env["DATABASE_URL"])
	}
	var kek bool
	for _, v := range spec.Volumes {
		kek = kek || v.Name == "kek" && v.Secret != nil && v.Secret.SecretName == "outpost-kek"
	}
	if env["OUTPOST_KEK_FILE"].Value != "/run/outpost-kek/current/kek" || !kek || env["OUTPOST_KEK"].Value != "" {
		t.Errorf("%s: OUTPOST_KEK_FILE %+v, Secret volume %v; want the key as a file from Secret outpost-kek", name, env["OUTPOST_KEK_FILE"], kek)
	}
}

// checkRolling: a rolling update that starts a new pod before stopping an
// old one, away from the component's other pods by preference.
func checkRolling(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	ru := d.Spec.Strategy.RollingUpdate
	if *d.Spec.Replicas != 2 || ru == nil || ru.MaxUnavailable.String() != "0" || ru.MaxSurge.String() != "1" {
		t.Errorf("%s: replicas %d, strategy %+v; want 2, maxUnavailable 0, maxSurge 1", d.Name, *d.Spec.Replicas, d.Spec.Strategy)
	}
	aa := d.Spec.Template.Spec.Affinity
	if aa == nil || aa.PodAntiAffinity == nil || len(aa.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 ||
		aa.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.TopologyKey != "kubernetes.io/hostname" {
		t.Errorf("%s: affinity %+v; want pods spread over nodes by preference", d.Name, aa)
	}
}

func checkAPI(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	c := d.Spec.Template.Spec.Containers[0]
	env := envOf(c)
	if c.Args[0] != "api" || env["TEMPORAL_ADDRESS"].Value != "temporal-frontend.temporal.svc:7233" ||
		env["OUTPOST_GATEWAY_URL"].Value != "https://gateway.example.com" || env["OUTPOST_REGISTRY_LISTEN"].Value != ":5000" {
		t.Errorf("api: args %v, env %v", c.Args, env)
	}
	if p := c.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" || p.HTTPGet.Port.String() != "gateway" {
		t.Errorf("api: readiness %+v; want GET /healthz on the gateway port", p)
	}
	if p := c.LivenessProbe; p == nil || p.TCPSocket == nil || p.TCPSocket.Port.String() != "http" {
		t.Errorf("api: liveness %+v; want the API port accepting", p)
	}
	if l := c.Lifecycle; l == nil || l.PreStop == nil || l.PreStop.Sleep == nil || l.PreStop.Sleep.Seconds != 5 {
		t.Errorf("api: lifecycle %+v; want a 5 s preStop sleep", l)
	}
	var data bool
	for _, v := range d.Spec.Template.Spec.Volumes {
		data = data || v.Name == "data" && v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == "outpost-registry"
	}
	if !data {
		t.Errorf("api: volumes %+v; want the registry claim", d.Spec.Template.Spec.Volumes)
	}
	checkMetrics(t, d)
}

func checkWorker(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	c := d.Spec.Template.Spec.Containers[0]
	env := envOf(c)
	if c.Args[0] != "worker" || env["OUTPOST_REGISTRY_URL"].Value != "https://registry.example.com" || env["OUTPOST_HEALTH_LISTEN"].Value != ":8082" {
		t.Errorf("worker: args %v, env %v", c.Args, env)
	}
	if _, ok := env["OUTPOST_PUBLIC_URL"]; ok {
		t.Errorf("worker: OUTPOST_PUBLIC_URL %+v though dashboard.url is not set", env["OUTPOST_PUBLIC_URL"])
	}
	if p := c.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" || p.HTTPGet.Port.String() != "health" {
		t.Errorf("worker: readiness %+v; want GET /healthz on its health port", p)
	}
	checkMetrics(t, d)
}

// checkMetrics: the pod serves GET /metrics on its metrics port.
func checkMetrics(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	c := d.Spec.Template.Spec.Containers[0]
	port := false
	for _, p := range c.Ports {
		port = port || p.Name == "metrics" && p.ContainerPort == 9464
	}
	if env := envOf(c); env["OUTPOST_METRICS_LISTEN"].Value != ":9464" || !port {
		t.Errorf("%s: OUTPOST_METRICS_LISTEN %+v, ports %+v; want :9464 and a metrics port", d.Name, env["OUTPOST_METRICS_LISTEN"], c.Ports)
	}
}

// Options: an image pinned by digest, an existing claim, a previous key
// during a rotation, and an Ingress routing each host to its Service.
func TestTheControlPlaneChartOptions(t *testing.T) {
	vals := planeValues()
	digest := "sha256:" + strings.Repeat("ab", 32)
	vals["image"] = map[string]any{"repository": "registry.example:5000/outpost", "digest": digest}
	vals["kek"] = map[string]any{"existingSecret": "outpost-kek", "previousSecret": "outpost-kek-old"}
	vals["registry"] = map[string]any{"url": "https://registry.example.com", "persistence": map[string]any{"existingClaim": "blobs"}}
	vals["ingress"] = map[string]any{"enabled": true, "className": "nginx",
		"api": map[string]any{"host": "outpost.example.com"}, "gateway": map[string]any{"host": "gateway.example.com"}}
	vals["dashboard"] = map[string]any{"url": "https://outpost.example.com"}
	objs := renderPlane(t, vals)
	if env := envOf(objs["Deployment/outpost-worker"].(*appsv1.Deployment).Spec.Template.Spec.Containers[0]); env["OUTPOST_PUBLIC_URL"].Value != "https://outpost.example.com" {
		t.Errorf("worker: OUTPOST_PUBLIC_URL %+v; want dashboard.url (notifications link there)", env["OUTPOST_PUBLIC_URL"])
	}
	if _, ok := objs["PersistentVolumeClaim/outpost-registry"]; ok {
		t.Error("the chart made a claim though one was given")
	}
	api := objs["Deployment/outpost-api"].(*appsv1.Deployment).Spec.Template.Spec
	if img := api.Containers[0].Image; img != "registry.example:5000/outpost@"+digest {
		t.Errorf("image %s, want it pinned by digest", img)
	}
	if env := envOf(api.Containers[0]); env["OUTPOST_KEK_PREVIOUS_FILE"].Value != "/run/outpost-kek/previous/kek" {
		t.Errorf("OUTPOST_KEK_PREVIOUS_FILE %+v", env["OUTPOST_KEK_PREVIOUS_FILE"])
	}
	var claim, previous bool
	for _, v := range api.Volumes {
		claim = claim || v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == "blobs"
		previous = previous || v.Secret != nil && v.Secret.SecretName == "outpost-kek-old"
	}
	if !claim || !previous {
		t.Errorf("volumes %+v; want claim blobs and Secret outpost-kek-old", api.Volumes)
	}
	ing, ok := objs["Ingress/outpost"].(*networkingv1.Ingress)
	if !ok || *ing.Spec.IngressClassName != "nginx" || len(ing.Spec.Rules) != 2 {
		t.Fatalf("Ingress: %+v", objs["Ingress/outpost"])
	}
	for _, r := range ing.Spec.Rules {
		backend := r.HTTP.Paths[0].Backend.Service
		if want := map[string]string{"outpost.example.com": "outpost-api", "gateway.example.com": "outpost-gateway"}[r.Host]; backend.Name != want {
			t.Errorf("Ingress host %s goes to %s, want %s", r.Host, backend.Name, want)
		}
	}
}

func appVersion(t *testing.T) string {
	t.Helper()
	return controlPlaneChart(t).Metadata.AppVersion
}

// The example of a small installation: its values pass the schema and
// render, and point at the Service of its `outpost temporal`.
func TestTheControlPlaneChartExamples(t *testing.T) {
	b, err := fs.ReadFile(charts.ControlPlaneChart(), "examples/values-small.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var vals map[string]any
	if err := yaml.Unmarshal(b, &vals); err != nil {
		t.Fatal(err)
	}
	objs := renderPlane(t, vals)
	env := envOf(objs["Deployment/outpost-worker"].(*appsv1.Deployment).Spec.Template.Spec.Containers[0])
	if _, ok := objs["Ingress/outpost"]; !ok || env["TEMPORAL_ADDRESS"].Value != "outpost-temporal:7233" {
		t.Errorf("values-small.yaml: Ingress %v, TEMPORAL_ADDRESS %+v", ok, env["TEMPORAL_ADDRESS"])
	}
	manifests, err := fs.ReadFile(charts.ControlPlaneChart(), "examples/outpost-temporal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var svc *corev1.Service
	var temporal *appsv1.Deployment
	for _, doc := range strings.Split(string(manifests), "\n---\n") {
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
		if err != nil {
			t.Fatalf("outpost-temporal.yaml: %v", err)
		}
		switch o := obj.(type) {
		case *corev1.Service:
			svc = o
		case *appsv1.Deployment:
			temporal = o
		}
	}
	if svc == nil || svc.Name != "outpost-temporal" || svc.Spec.Ports[0].Port != 7233 || temporal == nil ||
		temporal.Spec.Template.Spec.Containers[0].Args[0] != "temporal" || *temporal.Spec.Replicas != 1 {
		t.Errorf("outpost-temporal.yaml: Service %+v, Deployment %+v", svc, temporal)
	}
}
