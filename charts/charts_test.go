package charts_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/lint/support"
	"helm.sh/helm/v3/pkg/strvals"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/outpost-dev/outpost/charts"
	"github.com/outpost-dev/outpost/charts/chartstest"
	"github.com/outpost-dev/outpost/localcluster/localclustertest"
)

var cluster localclustertest.Shared

func TestMain(m *testing.M) { os.Exit(cluster.Main(m)) }

var install = charts.RunnerInstall{
	GatewayURL:  "https://outpost.example.com",
	TokenSecret: "outpost-runner-token",
	Namespace:   "outpost",
	Image:       "ghcr.io/outpost-dev/outpost-runner:v1.2.3",
}

func TestRunnerInstallCommand(t *testing.T) {
	got, err := install.Command()
	want := "helm install outpost-runner oci://ghcr.io/outpost-dev/charts/outpost-runner --version " + charts.RunnerChartVersion +
		" --namespace outpost --create-namespace" +
		" --set-string gateway.url=https://outpost.example.com" +
		" --set-string token.existingSecret=outpost-runner-token" +
		" --set-string image.repository=ghcr.io/outpost-dev/outpost-runner --set-string image.tag=v1.2.3"
	if err != nil || got != want {
		t.Errorf("command:\n%s\nwant:\n%s (%v)", got, want, err)
	}

	// A digest pins the image; an odd gateway URL is escaped for helm and
	// quoted for the shell.
	in := install
	in.Image = "registry.example:5000/runner@sha256:" + strings.Repeat("ab", 32)
	in.GatewayURL = "https://gw.example/a,b?x='y'"
	got, err = in.Command()
	if err != nil || !strings.Contains(got, " --set-string image.repository=registry.example:5000/runner --set-string image.digest=sha256:abab") ||
		strings.Contains(got, "image.tag") || !strings.Contains(got, ` --set-string 'gateway.url=https://gw.example/a\,b?x='\''y'\'''`) {
		t.Errorf("command: %s (%v)", got, err)
	}

	for _, tc := range []struct {
		mod  func(*charts.RunnerInstall)
		want string
	}{
		{func(in *charts.RunnerInstall) { in.GatewayURL = "" }, "gateway URL: required"},
		{func(in *charts.RunnerInstall) { in.GatewayURL = "outpost.example.com" }, `gateway URL "outpost.example.com": must be an http(s) URL`},
		{func(in *charts.RunnerInstall) { in.TokenSecret = "Token Secret" }, `token secret "Token Secret": a lowercase RFC 1123 subdomain`},
		{func(in *charts.RunnerInstall) { in.Namespace = "" }, `namespace "": `},
		{func(in *charts.RunnerInstall) { in.Image = "runner; rm -rf /" }, `image "runner; rm -rf /": must be repository[:tag][@sha256:digest]`},
	} {
		in := install
		tc.mod(&in)
		if _, err := in.Command(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Command: %v; want %q", err, tc.want)
		}
	}
}

// env installs the chart on the package's cluster with the helm SDK.
type env struct {
	t    *testing.T
	cs   kubernetes.Interface
	path string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	c, cs := cluster.Clients(t)
	return &env{t: t, cs: cs, path: c.KubeconfigPath()}
}

// install is `helm install outpost-runner <chart> -n ns --create-namespace`
// with vals.
func (e *env) install(ns string, vals map[string]any) error {
	return chartstest.InstallRunner(e.path, ns, vals)
}

// valuesOf parses the --set-string flags of a command line as helm does.
func valuesOf(t *testing.T, args []string) map[string]any {
	t.Helper()
	vals := map[string]any{}
	for i, a := range args {
		if a == "--set-string" {
			if err := strvals.ParseIntoString(args[i+1], vals); err != nil {
				t.Fatalf("--set-string %s: %v", args[i+1], err)
			}
		}
	}
	return vals
}

func TestTheInstallCommandInstallsARunner(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	in := install
	in.Namespace = "outpost-admin"
	args, err := in.Args()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.install(in.Namespace, valuesOf(t, args)); err != nil {
		t.Fatalf("helm install: %v", err)
	}

	if _, err := e.cs.CoreV1().Namespaces().Get(ctx, in.Namespace, metav1.GetOptions{}); err != nil {
		t.Errorf("namespace: %v", err)
	}
	sa, err := e.cs.CoreV1().ServiceAccounts(in.Namespace).Get(ctx, "outpost-runner", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("ServiceAccount: %v", err)
	}
	crb, err := e.cs.RbacV1().ClusterRoleBindings().Get(ctx, "outpost-runner-outpost-admin", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("ClusterRoleBinding: %v", err)
	}
	if crb.RoleRef.Kind != "ClusterRole" || crb.RoleRef.Name != "cluster-admin" || len(crb.Subjects) != 1 ||
		crb.Subjects[0].Kind != "ServiceAccount" || crb.Subjects[0].Name != sa.Name || crb.Subjects[0].Namespace != in.Namespace {
		t.Errorf("ClusterRoleBinding: %+v %+v", crb.RoleRef, crb.Subjects)
	}
	if roles, _ := e.cs.RbacV1().Roles(in.Namespace).List(ctx, metav1.ListOptions{}); len(roles.Items) != 0 {
		t.Errorf("a cluster-admin runner got Roles too: %v", roles.Items)
	}
	// The token is the given Secret's: the chart makes none.
	if _, err := e.cs.CoreV1().Secrets(in.Namespace).Get(ctx, "outpost-runner-token-token", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the chart made a token Secret although one was given: %v", err)
	}

	c := e.container(in.Namespace, sa.Name)
	if c.Image != "ghcr.io/outpost-dev/outpost-runner:v1.2.3" || len(c.Args) != 1 || c.Args[0] != "run" {
		t.Errorf("container image %s, args %v", c.Image, c.Args)
	}
	env := envOf(c)
	if v := env["OUTPOST_GATEWAY_URL"]; v.Value != in.GatewayURL {
		t.Errorf("OUTPOST_GATEWAY_URL: %+v", v)
	}
	if v := env["OUTPOST_TOKEN"]; v.Value != "" || v.ValueFrom == nil || v.ValueFrom.SecretKeyRef == nil ||
		v.ValueFrom.SecretKeyRef.Name != in.TokenSecret || v.ValueFrom.SecretKeyRef.Key != "token" {
		t.Errorf("OUTPOST_TOKEN: %+v; want it from Secret %s, key token", v, in.TokenSecret)
	}
	if v := env["OUTPOST_HEALTH_ADDR"]; v.Value != ":8081" {
		t.Errorf("OUTPOST_HEALTH_ADDR: %+v", v)
	}
	if c.Resources.Limits.Cpu().String() != "2" || c.Resources.Limits.Memory().String() != "2Gi" ||
		c.Resources.Requests.Cpu().String() != "100m" || c.Resources.Requests.Memory().String() != "256Mi" {
		t.Errorf("resources: %+v", c.Resources)
	}
	p := c.LivenessProbe
	if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" || p.HTTPGet.Port.String() != "health" ||
		len(c.Ports) != 1 || c.Ports[0].Name != "health" || c.Ports[0].ContainerPort != 8081 {
		t.Errorf("liveness probe %+v, ports %+v; want GET /healthz on the health port 8081", p, c.Ports)
	}
	if p := c.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/readyz" || p.HTTPGet.Port.String() != "health" {
		t.Errorf("readiness probe %+v; want GET /readyz on the health port", p)
	}
}

func TestANamespacedRunnerWithItsOwnTokenSecret(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const ns = "outpost-namespaced"
	err := e.install(ns, map[string]any{
		"gateway": map[string]any{"url": "https://outpost.example.com"},
		"token":   map[string]any{"value": "oprg_chart-test-token"},
		"rbac":    map[string]any{"clusterAdmin": false},
	})
	if err != nil {
		t.Fatalf("helm install: %v", err)
	}
	role, err := e.cs.RbacV1().Roles(ns).Get(ctx, "outpost-runner", metav1.GetOptions{})
	if err != nil || len(role.Rules) != 1 || role.Rules[0].Resources[0] != "*" {
		t.Fatalf("Role: %+v %v", role, err)
	}
	rb, err := e.cs.RbacV1().RoleBindings(ns).Get(ctx, "outpost-runner", metav1.GetOptions{})
	if err != nil || rb.RoleRef.Kind != "Role" || rb.RoleRef.Name != role.Name || rb.Subjects[0].Name != "outpost-runner" || rb.Subjects[0].Namespace != ns {
		t.Errorf("RoleBinding: %+v %v", rb, err)
	}
	if _, err := e.cs.RbacV1().ClusterRoleBindings().Get(ctx, "outpost-runner-"+ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a namespaced runner got a ClusterRoleBinding: %v", err)
	}
	secret, err := e.cs.CoreV1().Secrets(ns).Get(ctx, "outpost-runner-token", metav1.GetOptions{})
	if err != nil || string(secret.Data["token"]) != "oprg_chart-test-token" {
		t.Fatalf("token Secret: %v %v", secret, err)
	}
	ref := envOf(e.container(ns, "outpost-runner"))["OUTPOST_TOKEN"].ValueFrom
	if ref == nil || ref.SecretKeyRef == nil || ref.SecretKeyRef.Name != secret.Name || ref.SecretKeyRef.Key != "token" {
		t.Errorf("OUTPOST_TOKEN from %+v; want the chart's Secret", ref)
	}
}

func TestRequiredValuesAreNamed(t *testing.T) {
	e := newEnv(t)
	for ns, tc := range map[string]struct {
		vals map[string]any
		want string
	}{
		"outpost-no-gateway": {map[string]any{"token": map[string]any{"existingSecret": "s"}}, "gateway.url is required"},
		"outpost-no-token":   {map[string]any{"gateway": map[string]any{"url": "https://gw"}}, "token.value or token.existingSecret is required"},
		// The chart sets both security contexts itself with a job user: it refuses, rather than drops, one given.
		"outpost-root-and-context": {map[string]any{"gateway": map[string]any{"url": "https://gw"}, "token": map[string]any{"value": "oprn_x"},
			"securityContext": map[string]any{"runAsUser": 1000}}, "podSecurityContext and securityContext are not used with runner.jobUser"},
	} {
		if err := e.install(ns, tc.vals); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("install without it: %v; want %q", err, tc.want)
		}
	}
}

func TestTheChartLints(t *testing.T) {
	archive, err := charts.RunnerChartArchive()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := dir + "/outpost-runner-" + charts.RunnerChartVersion + ".tgz"
	if err := os.WriteFile(path, archive, 0o600); err != nil {
		t.Fatal(err)
	}
	lint := action.NewLint()
	lint.Strict = true
	res := lint.Run([]string{path}, map[string]any{"gateway": map[string]any{"url": "https://gw"}, "token": map[string]any{"value": "oprn_x"}})
	for _, m := range res.Messages {
		if m.Severity > support.InfoSev { // an icon is only recommended
			t.Errorf("helm lint: %s", m)
		}
	}
	for _, err := range res.Errors {
		t.Errorf("helm lint: %v", err)
	}
	again, _ := charts.RunnerChartArchive()
	if !bytes.Equal(archive, again) {
		t.Error("the chart archive differs from one call to the next")
	}
}

// container is the runner Deployment's only container, after checking the
// pod runs as the ServiceAccount.
func (e *env) container(ns, serviceAccount string) corev1.Container {
	e.t.Helper()
	d, err := e.cs.AppsV1().Deployments(ns).Get(context.Background(), "outpost-runner", metav1.GetOptions{})
	if err != nil {
		e.t.Fatalf("Deployment: %v", err)
	}
	spec := d.Spec.Template.Spec
	if spec.ServiceAccountName != serviceAccount || len(spec.Containers) != 1 || *d.Spec.Replicas != 1 {
		e.t.Fatalf("Deployment: service account %q, %d containers, %d replicas", spec.ServiceAccountName, len(spec.Containers), *d.Spec.Replicas)
	}
	// Self-update (helm mode): the old pod runs until the new one is ready,
	// and the runner knows its Deployment.
	if ru := d.Spec.Strategy.RollingUpdate; ru == nil || ru.MaxUnavailable.String() != "0" || ru.MaxSurge.String() != "1" || d.Spec.MinReadySeconds != 10 {
		e.t.Errorf("Deployment strategy %+v, minReadySeconds %d; want a rolling update with maxUnavailable 0, maxSurge 1, 10", d.Spec.Strategy, d.Spec.MinReadySeconds)
	}
	if v := envOf(spec.Containers[0])["OUTPOST_DEPLOYMENT"]; v.Value != ns+"/outpost-runner" {
		e.t.Errorf("OUTPOST_DEPLOYMENT: %+v; want %s/outpost-runner", v, ns)
	}
	return spec.Containers[0]
}

func envOf(c corev1.Container) map[string]corev1.EnvVar {
	m := map[string]corev1.EnvVar{}
	for _, v := range c.Env {
		m[v.Name] = v
	}
	return m
}

// Behind a corporate proxy with a CA of its own: the runner container gets
// the proxy variables and --ca-bundle pointing into the mounted ConfigMap.
func TestARunnerBehindAProxyWithACABundle(t *testing.T) {
	e := newEnv(t)
	const ns = "outpost-corpnet"
	err := e.install(ns, map[string]any{
		"gateway":  map[string]any{"url": "https://outpost.example.com"},
		"token":    map[string]any{"value": "oprg_chart-test-token"},
		"proxy":    map[string]any{"https": "http://proxy.corp.example:3128", "noProxy": ".svc,.cluster.local"},
		"caBundle": map[string]any{"configMap": "corp-ca", "key": "corp.pem"},
	})
	if err != nil {
		t.Fatalf("helm install: %v", err)
	}
	c := e.container(ns, "outpost-runner")
	env := envOf(c)
	for k, want := range map[string]string{"HTTPS_PROXY": "http://proxy.corp.example:3128", "NO_PROXY": ".svc,.cluster.local",
		"OUTPOST_CA_BUNDLE": "/etc/outpost-runner/ca/corp.pem"} {
		if env[k].Value != want {
			t.Errorf("%s=%q, want %q", k, env[k].Value, want)
		}
	}
	if _, ok := env["HTTP_PROXY"]; ok {
		t.Error("HTTP_PROXY set though proxy.http is empty")
	}
	e.checkConfigMapMount(ns, c, "ca-bundle", "corp-ca", "/etc/outpost-runner/ca")
}

// checkConfigMapMount fails the test unless the runner's Deployment has a
// volume of the ConfigMap configMap, which container c mounts read-only at
// path.
func (e *env) checkConfigMapMount(ns string, c corev1.Container, volumeName, configMap, path string) {
	e.t.Helper()
	d, err := e.cs.AppsV1().Deployments(ns).Get(context.Background(), "outpost-runner", metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var volume, mount bool
	for _, v := range d.Spec.Template.Spec.Volumes {
		volume = volume || v.Name == volumeName && v.ConfigMap != nil && v.ConfigMap.Name == configMap
	}
	for _, m := range c.VolumeMounts {
		mount = mount || m.Name == volumeName && m.MountPath == path && m.ReadOnly
	}
	if !volume || !mount {
		e.t.Errorf("the ConfigMap %s is not mounted read-only at %s: %+v %+v", configMap, path, d.Spec.Template.Spec.Volumes, c.VolumeMounts)
	}
}

// The customer's plan policies: a ConfigMap mounted read-only where
// OUTPOST_PLAN_POLICIES (the runner's --plan-policies) points.
func TestARunnerWithTheCustomersPlanPolicies(t *testing.T) {
	e := newEnv(t)
	const ns = "outpost-policies"
	err := e.install(ns, map[string]any{
		"gateway":      map[string]any{"url": "https://outpost.example.com"},
		"token":        map[string]any{"value": "oprg_chart-test-token"},
		"planPolicies": map[string]any{"configMap": "acme-policies"},
	})
	if err != nil {
		t.Fatalf("helm install: %v", err)
	}
	c := e.container(ns, "outpost-runner")
	if got := envOf(c)["OUTPOST_PLAN_POLICIES"].Value; got != "/etc/outpost-runner/plan-policies" {
		t.Errorf("OUTPOST_PLAN_POLICIES=%q, want /etc/outpost-runner/plan-policies", got)
	}
	e.checkConfigMapMount(ns, c, "plan-policies", "acme-policies", "/etc/outpost-runner/plan-policies")
}
