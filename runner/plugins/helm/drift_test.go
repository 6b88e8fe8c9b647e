package helm_test

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/plugins/helm"
)

// shopJob is a job of the shop chart in ns with a password (so a Secret).
func (e *env) shopJob(op, ns string) protocol.HelmManifest {
	m := e.manifest(op, ns, "shop")
	m.CreateNamespace = true
	m.ChartArchive = chartArchive(e.t, "shop", shop)
	m.Values = valuesJSON(e.t, map[string]any{"greeting": "hello", "replicas": 2, "password": "drift-Secret-value"})
	return m
}

// planOf runs a plan that must succeed; it fails the test when the plan or
// its logs show the Secret's value.
func (e *env) planOf(m protocol.HelmManifest) protocol.HelmPlanOutputs {
	e.t.Helper()
	m.Operation = protocol.HelmPlan
	plan, logs := succeed[protocol.HelmPlanOutputs](e.t, m)
	shown := plan.Diff + logs
	if strings.Contains(shown, "Secret-value") || strings.Contains(shown, base64.StdEncoding.EncodeToString([]byte("drift-Secret-value"))) ||
		strings.Contains(shown, base64.StdEncoding.EncodeToString([]byte("other-Secret-value"))) {
		e.t.Errorf("the plan shows a Secret's value:\n%s\n%s", plan.Diff, logs)
	}
	return plan
}

func (e *env) update(what string, f func(ctx context.Context) error) {
	e.t.Helper()
	if err := f(context.Background()); err != nil {
		e.t.Fatalf("%s: %v", what, err)
	}
}

// Objects of a release edited or deleted through the API server show in the
// next plan, with the diff a deploy undoes; fields the chart does not set
// (a controller's annotation) do not; a deploy puts the edits back (helm's
// three-way merge with the live object) and recreates what was deleted.
func TestPlanSeesLiveDrift(t *testing.T) {
	e := newEnv(t)
	const ns = "shop-drift"
	m := e.shopJob(protocol.HelmDeploy, ns)
	succeed[protocol.HelmReleaseOutputs](t, m)
	if plan := e.planOf(m); plan.HasChanges || len(plan.Drifted) != 0 || plan.Diff != "" {
		t.Fatalf("plan of a release as deployed: %+v", plan)
	}

	// A controller's annotation and label: not drift.
	cms, deps, secrets := e.cs.CoreV1().ConfigMaps(ns), e.cs.AppsV1().Deployments(ns), e.cs.CoreV1().Secrets(ns)
	e.update("annotate", func(ctx context.Context) error {
		cm, err := cms.Get(ctx, "shop-settings", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cm.Annotations = map[string]string{"controller.example/seen": "yes"}
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "some-controller"})
		return err
	})
	e.update("label", func(ctx context.Context) error {
		d, err := deps.Get(ctx, "shop", metav1.GetOptions{})
		if err != nil {
			return err
		}
		d.Labels = map[string]string{"team": "ops"}
		_, err = deps.Update(ctx, d, metav1.UpdateOptions{FieldManager: "some-controller"})
		return err
	})
	if plan := e.planOf(m); plan.HasChanges || len(plan.Drifted) != 0 {
		t.Fatalf("plan after a controller's annotation and label: %+v", plan)
	}

	// Fields the chart sets, edited behind helm's back.
	e.update("edit the ConfigMap", func(ctx context.Context) error {
		cm, err := cms.Get(ctx, "shop-settings", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cm.Data["greeting"] = "edited by hand"
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		return err
	})
	e.update("edit the Deployment", func(ctx context.Context) error {
		d, err := deps.Get(ctx, "shop", metav1.GetOptions{})
		if err != nil {
			return err
		}
		five := int32(5)
		d.Spec.Replicas = &five
		d.Spec.Template.Spec.Containers[0].Image = "registry.example/evil:6.6"
		_, err = deps.Update(ctx, d, metav1.UpdateOptions{})
		return err
	})
	e.update("edit the Secret", func(ctx context.Context) error {
		s, err := secrets.Get(ctx, "shop-password", metav1.GetOptions{})
		if err != nil {
			return err
		}
		s.Data["password"] = []byte("other-Secret-value")
		_, err = secrets.Update(ctx, s, metav1.UpdateOptions{})
		return err
	})
	plan := e.planOf(m)
	want := []protocol.HelmObject{
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: "shop-settings"},
		{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: "shop"},
		{APIVersion: "v1", Kind: "Secret", Namespace: ns, Name: "shop-password"},
	}
	if !plan.HasChanges || !sameObjects(plan.Drifted, want) || len(plan.Added)+len(plan.Changed)+len(plan.Removed) != 0 {
		t.Fatalf("plan after live edits: %+v; want %v drifted", plan, want)
	}
	for _, s := range []string{
		"--- live/ConfigMap/shop-drift/shop-settings\n+++ b/ConfigMap/shop-drift/shop-settings\n",
		"-  greeting: edited by hand\n+  greeting: hello\n",
		"--- live/Deployment/shop-drift/shop\n", "-  replicas: 5\n+  replicas: 2\n",
		"--- live/Secret/shop-drift/shop-password\n", "-  password: " + helm.Redacted + "\n+  password: " + helm.RedactedChanged + "\n",
	} {
		if !strings.Contains(plan.Diff, s) {
			t.Errorf("the plan's diff lacks %q:\n%s", s, plan.Diff)
		}
	}
	if !diffLine(plan.Diff, '-', "image: registry.example/evil:6.6") || !diffLine(plan.Diff, '+', "image: registry.example/shop:1.4") {
		t.Errorf("the plan's diff does not put the image back:\n%s", plan.Diff)
	}
	if strings.Contains(plan.Diff, "-    controller.example/seen") || strings.Contains(plan.Diff, "-    team: ops") {
		t.Errorf("the plan would remove a controller's annotation or label:\n%s", plan.Diff)
	}

	// A deploy puts them back; the controller's annotation stays.
	_, logs := succeed[protocol.HelmReleaseOutputs](t, m)
	if strings.Contains(logs, "applied it server-side") {
		t.Errorf("helm's upgrade left built-in objects drifted:\n%s", logs)
	}
	cm := e.configMap(ns, "shop-settings")
	dep, err := deps.Get(context.Background(), "shop", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sec, err := secrets.Get(context.Background(), "shop-password", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm["greeting"] != "hello" || *dep.Spec.Replicas != 2 || dep.Spec.Template.Spec.Containers[0].Image != "registry.example/shop:1.4" ||
		string(sec.Data["password"]) != "drift-Secret-value" || dep.Labels["team"] != "ops" {
		t.Errorf("after the deploy: ConfigMap %v, replicas %d, image %s, Secret changed %v, labels %v", cm, *dep.Spec.Replicas,
			dep.Spec.Template.Spec.Containers[0].Image, string(sec.Data["password"]) != "drift-Secret-value", dep.Labels)
	}
	if plan := e.planOf(m); plan.HasChanges || len(plan.Drifted) != 0 {
		t.Fatalf("plan after the deploy: %+v", plan)
	}

	// A deleted object: drift, and the deploy creates it again.
	e.update("delete the ConfigMap", func(ctx context.Context) error {
		return cms.Delete(ctx, "shop-settings", metav1.DeleteOptions{})
	})
	plan = e.planOf(m)
	if !plan.HasChanges || !sameObjects(plan.Drifted, want[:1]) ||
		!strings.Contains(plan.Diff, "--- /dev/null\n+++ b/ConfigMap/shop-drift/shop-settings\n") {
		t.Fatalf("plan after a deletion: %+v\n%s", plan, plan.Diff)
	}
	succeed[protocol.HelmReleaseOutputs](t, m)
	if got := e.configMap(ns, "shop-settings"); got["greeting"] != "hello" {
		t.Errorf("ConfigMap after the deploy: %v", got)
	}
}

// widgetsChart is a chart holding a custom resource, which helm merges two-way.
var widgetsChart = map[string]string{
	"Chart.yaml": "apiVersion: v2\nname: widgets\nversion: 0.1.0\n",
	"templates/widget.yaml": `apiVersion: example.outpost.dev/v1
kind: Widget
metadata:
  name: {{ .Release.Name }}
spec:
  size: 3
`,
}

// widgetCRD is a CustomResourceDefinition of Widgets.
func widgetCRD() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.example.outpost.dev"},
		"spec": map[string]any{
			"group": "example.outpost.dev", "scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object",
					"properties": map[string]any{"spec": map[string]any{"type": "object",
						"properties": map[string]any{"size": map[string]any{"type": "integer"}}}}}}}},
		},
	}}
}

// A live edit of a custom resource, which helm's upgrade would keep (it
// merges custom resources with the previous revision only), is put back by
// the deploy's server-side apply.
func TestDeployRepairsADriftedCustomResource(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	dyn, err := dynamic.NewForConfig(e.c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	if _, err := crds.Create(ctx, widgetCRD(), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	const ns = "widgets-drift"
	widgets := dyn.Resource(schema.GroupVersionResource{Group: "example.outpost.dev", Version: "v1", Resource: "widgets"}).Namespace(ns)
	m := e.manifest(protocol.HelmDeploy, ns, "w")
	m.CreateNamespace = true
	m.ChartArchive = chartArchive(t, "widgets", widgetsChart)
	var r result
	for range 100 { // until the API server serves the new kind
		if r = run(t, m); r.err == nil || !strings.Contains(r.err.Error(), "no matches for kind") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if r.err != nil {
		t.Fatalf("deploy: %v\n%s", r.err, r.logs)
	}

	w, err := widgets.Get(ctx, "w", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	unstructured.SetNestedField(w.Object, int64(9), "spec", "size")
	if _, err := widgets.Update(ctx, w, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	plan := e.planOf(m)
	if !plan.HasChanges || len(plan.Drifted) != 1 || !strings.Contains(plan.Diff, "-  size: 9\n+  size: 3\n") {
		t.Fatalf("plan of an edited Widget: %+v\n%s", plan, plan.Diff)
	}
	_, logs := succeed[protocol.HelmReleaseOutputs](t, m)
	if !strings.Contains(logs, "outpost: Widget/widgets-drift/w still differed from the release after helm's upgrade: applied it server-side") {
		t.Errorf("deploy logs:\n%s", logs)
	}
	w, err = widgets.Get(ctx, "w", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if size, _, _ := unstructured.NestedInt64(w.Object, "spec", "size"); size != 3 {
		t.Errorf("Widget's size after the deploy: %d, want the chart's 3", size)
	}
	if plan := e.planOf(m); plan.HasChanges {
		t.Errorf("plan after the deploy: %+v\n%s", plan, plan.Diff)
	}
}

// diffLine says whether the diff has a line starting with sign that ends
// with text.
func diffLine(diff string, sign byte, text string) bool {
	for _, l := range strings.Split(diff, "\n") {
		if len(l) > 0 && l[0] == sign && strings.HasSuffix(l, text) {
			return true
		}
	}
	return false
}
