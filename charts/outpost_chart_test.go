package charts_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/lint/support"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/outpost-dev/outpost/charts"
	"github.com/outpost-dev/outpost/charts/chartstest"
)

// planeValues are the values a control plane install needs at least: the
// Secrets by name, Temporal, the URLs runners reach.
func planeValues() map[string]any {
	return map[string]any{
		"database": map[string]any{"existingSecret": "outpost-database"},
		"kek":      map[string]any{"existingSecret": "outpost-kek"},
		"temporal": map[string]any{"address": "temporal-frontend.temporal.svc:7233"},
		"gateway":  map[string]any{"url": "https://gateway.example.com"},
		"registry": map[string]any{"url": "https://registry.example.com"},
	}
}

func controlPlaneChart(t *testing.T) *chart.Chart {
	t.Helper()
	ch, err := chartstest.ControlPlaneChart()
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// `helm lint --strict` passes with the values an install needs, and names
// each required value when they are missing.
func TestTheControlPlaneChartLints(t *testing.T) {
	archive, err := charts.ControlPlaneChartArchive()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "outpost-"+charts.ControlPlaneChartVersion+".tgz")
	if err := os.WriteFile(path, archive, 0o600); err != nil {
		t.Fatal(err)
	}
	lint := action.NewLint()
	lint.Strict = true
	res := lint.Run([]string{path}, planeValues())
	for _, m := range res.Messages {
		if m.Severity > support.InfoSev { // an icon is only recommended
			t.Errorf("helm lint: %s", m)
		}
	}
	for _, err := range res.Errors {
		t.Errorf("helm lint: %v", err)
	}
	var all strings.Builder
	for _, m := range lint.Run([]string{path}, nil).Messages {
		all.WriteString(m.Error() + "\n")
	}
	for _, want := range []string{"'/database/existingSecret'", "'/kek/existingSecret'", "'/temporal/address'", "'/gateway/url'", "'/registry/url'"} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("helm lint without values does not name %s:\n%s", want, all.String())
		}
	}
}

// A bad value is refused by the values schema, naming it, before anything
// is rendered.
func TestTheControlPlaneChartRefusesBadValues(t *testing.T) {
	ch := controlPlaneChart(t)
	for _, tc := range []struct {
		name string
		set  func(v map[string]any)
		want string
	}{
		{"no database Secret", func(v map[string]any) { delete(v, "database") }, "database"},
		{"a Secret name that is none", func(v map[string]any) { v["database"] = map[string]any{"existingSecret": "Outpost_DB"} }, "'/database/existingSecret'"},
		{"a database URL in clear", func(v map[string]any) {
			v["database"] = map[string]any{"existingSecret": "db", "url": "postgres://u:pw@db/outpost"}
		}, "'/database'"},
		{"a key in clear", func(v map[string]any) { v["kek"] = map[string]any{"existingSecret": "kek", "value": "c2VjcmV0"} }, "'/kek'"},
		{"Temporal without a port", func(v map[string]any) { v["temporal"] = map[string]any{"address": "temporal.svc"} }, "'/temporal/address'"},
		{"a gateway URL without a scheme", func(v map[string]any) { v["gateway"] = map[string]any{"url": "gateway.example.com"} }, "'/gateway/url'"},
		{"no api replica", func(v map[string]any) { v["api"] = map[string]any{"replicas": 0} }, "'/api/replicas'"},
		{"replicas as words", func(v map[string]any) { v["worker"] = map[string]any{"replicas": "two"} }, "'/worker/replicas'"},
		{"a port out of range", func(v map[string]any) { v["service"] = map[string]any{"gateway": map[string]any{"port": 70000}} }, "'/service/gateway/port'"},
		{"a pull policy that is none", func(v map[string]any) { v["image"] = map[string]any{"pullPolicy": "Sometimes"} }, "'/image/pullPolicy'"},
		{"a typo at the top", func(v map[string]any) { v["replicas"] = 3 }, "'replicas'"},
		{"an access mode that is none", func(v map[string]any) {
			v["registry"] = map[string]any{"url": "https://r", "persistence": map[string]any{"accessModes": []any{"ReadWriteSometimes"}}}
		}, "'/registry/persistence/accessModes/0'"},
	} {
		vals := planeValues()
		tc.set(vals)
		_, err := chartstest.Template(ch, "outpost", "outpost", "v1.36.3", vals)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want an error naming %s", tc.name, err, tc.want)
		}
	}
}

// renderPlane is `helm template outpost <chart> -n outpost` with vals, each
// object decoded, by kind and name.
func renderPlane(t *testing.T, vals map[string]any) map[string]runtime.Object {
	t.Helper()
	out, err := chartstest.Template(controlPlaneChart(t), "outpost", "outpost", "v1.36.3", vals)
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	objs := map[string]runtime.Object{}
	for _, doc := range strings.Split(out, "\n---") {
		if strings.TrimSpace(strings.ReplaceAll(doc, "# Source:", "")) == "" || !strings.Contains(doc, "kind:") {
			continue
		}
		obj, gvk, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
		if err != nil {
			t.Fatalf("decode %s: %v", doc, err)
		}
		m := obj.(interface{ GetName() string })
		objs[gvk.Kind+"/"+m.GetName()] = obj
	}
	return objs
}

// scripts/docker.sh tags both images with one version, the runner chart's
// appVersion: the control plane's chart must name the same, so that each
// chart's default image is one the script builds.
func TestBothChartsNameTheImagesVersion(t *testing.T) {
	runner, err := chartstest.RunnerChart()
	if err != nil {
		t.Fatal(err)
	}
	if plane := controlPlaneChart(t).Metadata.AppVersion; plane != runner.Metadata.AppVersion {
		t.Errorf("appVersion: the control plane's chart %q, the runner's %q; want one version", plane, runner.Metadata.AppVersion)
	}
}
