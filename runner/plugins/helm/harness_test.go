package helm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/release"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"

	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/localcluster"
	"github.com/outpost-dev/outpost/localcluster/localclustertest"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/plugins"
	"github.com/outpost-dev/outpost/runner/plugins/helm"
)

// cluster is one real API server (etcd + kube-apiserver) for the package's
// tests; each test keeps to namespaces of its own.
var cluster localclustertest.Shared

func TestMain(m *testing.M) { os.Exit(cluster.Main(m)) }

// env is a test's view of the cluster.
type env struct {
	t  *testing.T
	c  *localcluster.Cluster
	cs kubernetes.Interface
}

func newEnv(t *testing.T) *env {
	t.Helper()
	c, cs := cluster.Clients(t)
	return &env{t: t, c: c, cs: cs}
}

// manifest is a helm job on the cluster.
func (e *env) manifest(op, ns, rel string) protocol.HelmManifest {
	return protocol.HelmManifest{Operation: op, Kubeconfig: string(e.c.Kubeconfig()), Release: rel, Namespace: ns}
}

// result is what a job showed: its outputs, its logs and its error.
type result struct {
	outputs json.RawMessage
	logs    string
	err     error
}

// run runs a job as the job process does: Validate, Execute, Outputs,
// Cleanup.
func run(t *testing.T, m protocol.HelmManifest) result {
	t.Helper()
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	p := helm.New()
	defer func() {
		if err := p.Cleanup(); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	}()
	if err := p.Validate(raw); err != nil {
		return result{err: err}
	}
	code, err := p.Execute(context.Background(), plugins.Run{Dir: t.TempDir(), Env: os.Environ(), Stdout: &logs, Stderr: &logs})
	if err == nil && code != 0 {
		t.Fatalf("exit code %d without an error", code)
	}
	if err != nil {
		return result{logs: logs.String(), err: err}
	}
	out, err := p.Outputs()
	if err != nil {
		t.Fatalf("outputs: %v", err)
	}
	return result{outputs: out, logs: logs.String()}
}

// succeed runs a job that must succeed and decodes its outputs into v.
func succeed[T any](t *testing.T, m protocol.HelmManifest) (T, string) {
	t.Helper()
	var v T
	r := run(t, m)
	if r.err != nil {
		t.Fatalf("helm %s of %s: %v\nlogs:\n%s", m.Operation, m.Release, r.err, r.logs)
	}
	if err := json.Unmarshal(r.outputs, &v); err != nil {
		t.Fatalf("outputs %s: %v", r.outputs, err)
	}
	return v, r.logs
}

// fail runs a job that must fail and returns its error message.
func fail(t *testing.T, m protocol.HelmManifest) (string, string) {
	t.Helper()
	r := run(t, m)
	if r.err == nil {
		t.Fatalf("helm %s of %s succeeded; want a failure\noutputs: %s\nlogs:\n%s", m.Operation, m.Release, r.outputs, r.logs)
	}
	return r.err.Error(), r.logs
}

// helmConfig is helm's configuration for namespace ns, as the helm CLI makes
// it from the kubeconfig file.
func (e *env) helmConfig(ns string) *action.Configuration {
	e.t.Helper()
	path := e.c.KubeconfigPath()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &path, &ns
	cfg := new(action.Configuration)
	if err := cfg.Init(flags, ns, "secret", func(string, ...any) {}); err != nil {
		e.t.Fatal(err)
	}
	return cfg
}

// releases is `helm list --all -n ns`: every release, whatever its status.
func (e *env) releases(ns string) []*release.Release {
	e.t.Helper()
	list := action.NewList(e.helmConfig(ns))
	list.All = true
	list.SetStateMask()
	rels, err := list.Run()
	if err != nil {
		e.t.Fatalf("helm list -n %s: %v", ns, err)
	}
	return rels
}

// onlyRelease checks ns holds exactly one release, name at revision with
// status, and returns it.
func (e *env) onlyRelease(ns, name string, revision int, status release.Status) *release.Release {
	e.t.Helper()
	rels := e.releases(ns)
	if len(rels) != 1 || rels[0].Name != name || rels[0].Version != revision || rels[0].Info.Status != status {
		e.t.Fatalf("releases in %s: %s; want %s at revision %d, %s", ns, describe(rels), name, revision, status)
	}
	return rels[0]
}

func describe(rels []*release.Release) string {
	s := make([]string, len(rels))
	for i, r := range rels {
		s[i] = fmt.Sprintf("%s revision %d %s", r.Name, r.Version, r.Info.Status)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// configMap returns a ConfigMap's data, or nil when it does not exist.
func (e *env) configMap(ns, name string) map[string]string {
	e.t.Helper()
	cm, err := e.cs.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		e.t.Fatal(err)
	}
	if cm.Data == nil {
		return map[string]string{}
	}
	return cm.Data
}

// checkNothingLeft fails the test unless, after what happened, ns holds no
// release and none of the ConfigMaps.
func (e *env) checkNothingLeft(ns, after string, configMaps ...string) {
	e.t.Helper()
	if rels := e.releases(ns); len(rels) != 0 {
		e.t.Errorf("releases after %s: %s", after, describe(rels))
	}
	for _, cm := range configMaps {
		if got := e.configMap(ns, cm); got != nil {
			e.t.Errorf("ConfigMap %s stayed after %s: %v", cm, after, got)
		}
	}
}

func (e *env) createNamespace(ns string) {
	e.t.Helper()
	_, err := e.cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
}

// chartArchive is a chart directory as `helm package` writes it: a gzipped
// tar whose entries are under the chart's name.
func chartArchive(t *testing.T, name string, files map[string]string) []byte {
	t.Helper()
	under := make(map[string]string, len(files))
	for f, content := range files {
		under[name+"/"+f] = content
	}
	return testutil.TarGz(t, under)
}

// with returns files plus more.
func with(files map[string]string, more map[string]string) map[string]string {
	out := maps.Clone(files)
	maps.Copy(out, more)
	return out
}

// shop is a chart with templated values: a ConfigMap, a Deployment, a
// Secret when there is a password, and extra ConfigMaps by name.
var shop = map[string]string{
	"Chart.yaml": "apiVersion: v2\nname: shop\nversion: 0.1.0\nappVersion: \"1.4\"\n",
	"values.yaml": `greeting: hello
replicas: 1
image: registry.example/shop:1.4
password: ""
extraConfigMaps: []
`,
	"templates/configmap.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-settings
data:
  greeting: {{ .Values.greeting | quote }}
`,
	"templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels:
      app: {{ .Release.Name }}
  template:
    metadata:
      labels:
        app: {{ .Release.Name }}
    spec:
      containers:
        - name: shop
          image: {{ .Values.image }}
          envFrom:
            - configMapRef:
                name: {{ .Release.Name }}-settings
`,
	"templates/secret.yaml": `{{- if .Values.password }}
apiVersion: v1
kind: Secret
metadata:
  name: {{ .Release.Name }}-password
stringData:
  password: {{ .Values.password | quote }}
{{- end }}
`,
	"templates/extra.yaml": `{{- range .Values.extraConfigMaps }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ . }}
data:
  extra: "yes"
{{- end }}
`,
	"templates/NOTES.txt": "The shop {{ .Release.Name }} says {{ .Values.greeting }}.\n",
}

// broken is shop with a template that does not parse (line 3).
var broken = with(shop, map[string]string{
	"templates/broken.yaml": "apiVersion: v1\nkind: ConfigMap\ndata: {{ nope .Values.greeting }}\n",
})

// valuesJSON is a values object.
func valuesJSON(t *testing.T, v map[string]any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
